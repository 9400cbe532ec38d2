"""Which splits a run predicts: ``run --splits dev`` (dev only), the counterpart of ``evaluate --split``.

A full run predicts dev, each labelled split scored beside it (FewCLUE's ``test_public``) and
every test version (the leaderboard files). A quick dev-only evaluation of an LLM must not
spend as long again on test, so ``--splits`` names what to predict: ``dev`` always (a run's
scores are dev's), a scored split by its name, ``test`` for every test version. The choice is
recorded in the manifest (``splits``) so that ``submit`` can refuse a run that wrote no
leaderboard files in one line, and so that ``--resume`` without ``--splits`` keeps it; a
``--resume`` with other splits is refused (the staged data and checksums are those of the
splits it started with), as a different seed is.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from clue_core.errors import ClueError
from clue_core.record import Manifest

if TYPE_CHECKING:
    from clue_core.specs import TaskSpec

#: The name ``--splits`` gives every test version of a task (the leaderboard's files).
TEST = "test"


def default_splits(task: TaskSpec) -> tuple[str, ...]:
    """What a run without ``--splits`` predicts (and what a run recorded before ``splits`` existed did)."""
    return ("dev", *task.scored_splits, *((TEST,) if task.test_versions else ()))


def check_known(requested: tuple[str, ...] | None, tasks: Sequence[TaskSpec]) -> None:
    """Every name of ``--splits`` is a split some task of the run predicts; a typo is one line."""
    if requested is None:
        return
    known = {name for task in tasks for name in default_splits(task)} | {"dev", TEST}
    for name in requested:
        if name not in known:
            raise ClueError(f"--splits: no task of this run predicts a split {name!r} (choose from "
                            f"{', '.join(sorted(known))}; 'test' is every test version)")


def task_splits(task: TaskSpec, requested: tuple[str, ...] | None) -> tuple[str, ...]:
    """The splits this task predicts: those of ``requested`` it has, in the order a run predicts them."""
    every = default_splits(task)
    return every if requested is None else tuple(name for name in every if name in requested)


def recorded_splits(manifest: Manifest, task: TaskSpec) -> tuple[str, ...]:
    """The splits a run predicted, as its manifest records them (a run made before: everything)."""
    splits = manifest.splits
    return tuple(splits) if splits is not None else default_splits(task)


def dev_only(splits: Sequence[str]) -> str:
    """How a run that predicted no test split is named in messages: ``dev only (--splits dev)``."""
    return f"{'dev only' if tuple(splits) == ('dev',) else 'no test'} (--splits {','.join(splits)})"
