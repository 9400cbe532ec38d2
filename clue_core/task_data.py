"""A task's data as a run reads it once its plan is settled: the folder, each split it predicts (through
the reader and the kernel's example checks), the test versions ``--splits`` keeps, their notes and the
files' checksums (the manifest records them, ``--resume`` compares them). Apart from the runner, whose
own steps (``--limit``, the learner, each task's run) follow the reading instead of surrounding it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from clue_core import data
from clue_core.errors import ClueError, DataError
from clue_core.reading import read_split
from clue_core.splits import TEST

if TYPE_CHECKING:
    from clue_core.kernel import Kernel
    from clue_core.plans import RunRequest, TaskPlan


def read_task_data(plan: TaskPlan, request: RunRequest, kernel: Kernel) -> None:
    """``plan``'s data read and checked into it (splits, tests, notes, checksums, a resumed run's files' match)."""
    task = plan.task
    data_dir = data.resolve_task_data(task, data_dir=request.data_dir, sample=request.sample,
                                        fetchers=kernel.fetchers, owners=kernel.owner, openers=kernel.openers)
    plan.data_dir = data_dir
    for split in (*task.splits, *task.scored_splits):  # a scored split is labelled: read and checked as dev is
        if split in ("train", "dev") or (split in task.scored_splits and split in plan.predict):  # as --splits says
            plan.splits[split] = read_split(task, data_dir, split, plan.settings, kinds=kernel.kinds)
    plan.notes += [f"{split}: {note}" for split, part in plan.splits.items() for note in part.notes]
    for version in task.test_versions if TEST in plan.predict else ():  # --splits dev: no test read or written
        try:
            plan.tests[version.version] = read_split(task, data_dir, version.split, plan.settings,
                                                     kinds=kernel.kinds)
        except DataError as exc:
            plan.notes.append(f"test {version.version}: skipped ({exc})")
            continue
        plan.notes += [f"test {version.version}: {note}" for note in plan.tests[version.version].notes]
    files = sorted({f for part in [*plan.splits.values(), *plan.tests.values()] for f in part.files})
    plan.checksums = data.file_checksums([Path(f) for f in files]) if files else {}
    if plan.resume and plan.checksums != plan.resumed_files:  # the one resume check that needs the data
        raise ClueError(f"cannot resume {plan.paths.staging}: it was started with a different set of data files "
                        f"({_changed(plan.resumed_files or {}, plan.checksums)}); use --overwrite to start over")


def _changed(then: dict[str, str], now: dict[str, str]) -> str:
    """Which data files differ from those a resumed run started with, so the user knows what to put back."""
    said = [f"{name} {'changed' if name in now else 'is gone'}" if name in then else f"{name} is new"
            for name in sorted({*then, *now}) if then.get(name) != now.get(name)]
    return ", ".join(said[:3]) + (f" and {len(said) - 3} more" if len(said) > 3 else "")
