"""A task's data as a run reads it once its plan is settled: the folder, each split it predicts (through
the reader and the kernel's example checks), the test versions ``--splits`` keeps, cut down as ``--limit``
or ``--first`` asks (:func:`limited`), their notes and the files' checksums (the manifest records them,
``--resume`` compares them). The runner asks it once per task; what the task then does with its data
(the learner, fit → predict → score → write) is :mod:`clue_core.task_run`'s.
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clue_core import data
from clue_core.errors import ClueError, DataError
from clue_core.examples import SplitData
from clue_core.reading import read_split
from clue_core.splits import TEST

if TYPE_CHECKING:
    from clue_core.kernel import Kernel
    from clue_core.plans import RunRequest, TaskPlan


def read_task_data(plan: TaskPlan, request: RunRequest, kernel: Kernel) -> None:
    """``plan``'s data read and checked into it (splits, tests, notes, checksums, a resumed run's files' match),
    each split as much of it as ``--limit`` / ``--first`` keeps (its files' checksums are the whole files')."""
    task = plan.task
    keep, partial = _kept(request)
    data_dir = data.resolve_task_data(task, data_dir=request.data_dir, sample=request.sample,
                                        fetchers=kernel.fetchers, owners=kernel.owner, openers=kernel.openers)
    plan.data_dir = data_dir
    for split in (*task.splits, *task.scored_splits):  # a scored split is labelled: read and checked as dev is
        if split in ("train", "dev") or (split in task.scored_splits and split in plan.predict):  # as --splits says
            plan.splits[split] = keep(read_split(task, data_dir, split, plan.settings, kinds=kernel.kinds))
    plan.notes += [f"{split}: {note}" for split, part in plan.splits.items() for note in part.notes]
    for version in task.test_versions if TEST in plan.predict else ():  # --splits dev: no test read or written
        try:
            plan.tests[version.version] = keep(read_split(task, data_dir, version.split, plan.settings,
                                                          kinds=kernel.kinds))
        except DataError as exc:
            plan.notes.append(f"test {version.version}: skipped ({exc})")
            continue
        plan.notes += [f"test {version.version}: {note}" for note in plan.tests[version.version].notes]
    plan.notes += partial
    files = sorted({f for part in [*plan.splits.values(), *plan.tests.values()] for f in part.files})
    # absolute, as the manifest's data_dir: a relative --data-dir named other files from another folder
    plan.checksums = _absolute(data.file_checksums([Path(f) for f in files])) if files else {}
    if plan.resume and plan.checksums != _absolute(plan.resumed_files):  # the one resume check that needs the data
        raise ClueError(f"cannot resume {plan.paths.staging}: it was started with a different set of data files "
                        f"({_changed(_absolute(plan.resumed_files), plan.checksums)}); use --overwrite to start over")


def _absolute(files: object) -> dict[str, str]:
    """A manifest's ``files`` keyed by absolute paths (earlier versions wrote them as typed, relative to the
    folder the run started in: the one a resume of such a staging folder runs from)."""
    return {os.path.abspath(name): digest for name, digest in files.items()} if isinstance(files, dict) else {}


def _changed(then: dict[str, str], now: dict[str, str]) -> str:
    """Which data files differ from those a resumed run started with, so the user knows what to put back."""
    said = [f"{name} {'changed' if name in now else 'is gone'}" if name in then else f"{name} is new"
            for name in sorted({*then, *now}) if then.get(name) != now.get(name)]
    return ", ".join(said[:3]) + (f" and {len(said) - 3} more" if len(said) > 3 else "")


def _kept(request: RunRequest) -> tuple[Callable[[SplitData], SplitData], list[str]]:
    """What ``--limit`` / ``--first`` keeps of each split read (all of it without them), and the note that says so."""
    limit, seed, first = request.limit, request.seed, request.first
    if limit is None:
        return lambda part: part, []
    if first:
        note = (f"partial run: the first {limit} examples (or example groups) per split in file order (--first); "
                f"not comparable with full runs and not submittable")
    else:
        note = (f"partial run: at most {limit} examples (or example groups) per split, drawn with seed {seed}; "
                f"not comparable with full runs and not submittable")
    return lambda part: limited(part, limit, seed, first), [note]


def limited(part: SplitData, limit: int, seed: int, first: bool = False) -> SplitData:
    """A seeded subset of at most ``limit`` examples in file order (``first``: the first ``limit``); grouped
    examples (the blanks of one passage) are kept or dropped together, counting one group as one."""
    groups: dict[Any, list[int]] = {}
    for index, example in enumerate(part.examples):
        key = getattr(example, "group", None)
        groups.setdefault(key if key is not None else ("example", index), []).append(index)
    if len(groups) <= limit:
        return part
    keys = list(groups)
    drawn = keys[:limit] if first else random.Random(seed).sample(keys, limit)
    chosen = sorted(i for key in drawn for i in groups[key])
    where = tuple(part.where[i] for i in chosen) if len(part.where) == len(part.examples) else ()
    return SplitData(tuple(part.examples[i] for i in chosen), part.notes, part.files, where)
