"""Run control that the kernel owns and hands to a learner: the typed run context.

Seed, resume, rank and world size, where files go and which metric decides are not
settings a user can mistype under ``--set``; they travel here, typed, and the
:class:`Learner` protocol says what a model factory returns.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from clue_core.examples import Example, Prediction
    from clue_core.specs import TaskSpec


def process_rank() -> tuple[int, int]:
    """``(rank, world size)`` as torchrun / accelerate launch set them (``(0, 1)`` alone)."""
    return _whole("RANK", 0), _whole("WORLD_SIZE", 1)


def _whole(name: str, default: int) -> int:
    """An environment variable a launcher sets, as a number: a mistyped one is one line, not a traceback."""
    value = os.environ.get(name, "").strip()
    try:
        return int(value) if value else default
    except ValueError:
        from clue_core.errors import ClueError

        raise ClueError(f"{name}={value!r} in the environment is not a whole number "
                        f"(torchrun sets it to the process's {'rank' if name == 'RANK' else 'count'})") from None


def is_main_process() -> bool:
    """Only rank 0 writes files when several processes share a run."""
    return process_rank()[0] == 0


def _no_score(predictions: Sequence[Prediction]) -> dict[str, float]:
    return {}


@dataclass(slots=True)
class SplitCursor:
    """Which split the kernel is predicting now: a mutable cell, since the context itself is frozen."""

    name: str = ""


@dataclass(frozen=True, slots=True)
class RunContext:
    """What one task's run tells its learner and its model-calling steps.

    ``run_dir`` is where the run is being built (a staging folder until it is complete);
    ``training_dir`` holds checkpoints a resumed run continues from. ``score`` decodes
    and scores dev predictions with the task's metrics exactly as the final scores are
    computed, so a learner can keep its best checkpoint without knowing the task.
    ``load_model(name, namespace)`` builds another model with the settings under
    ``<namespace>.`` (a judge). :attr:`split` names the split being predicted, for progress lines:
    ``predict(examples)`` is not told which split its examples are, and "scoring 16 examples" in
    a log of dev, test_public and two test versions did not say which one was slow.

    The run's settings are deliberately not here: each step receives only the values of its
    own declarations (the factory, the decode step, each metric, a judge through
    ``load_model``), so a plugin cannot come to depend on a setting some other spec declares.
    """

    task: TaskSpec
    seed: int = 42
    run_dir: Path = Path(".")
    resume: bool = False
    rank: int = 0
    world_size: int = 1
    primary_metric: str = "accuracy"
    score: Callable[[Sequence[Prediction]], dict[str, float]] = _no_score
    echo: Callable[[str], None] = print
    limit: int | None = None
    cache_dir: Path | None = None
    load_model: Callable[[str, str], Learner] | None = None
    cursor: SplitCursor = field(default_factory=SplitCursor, repr=False, compare=False)

    @property
    def split(self) -> str:
        """The split the kernel is predicting and scoring now (``dev``, ``test_public``, ``test 1.1``),
        ``""`` outside those calls (while training: a learner that scores dev as it trains knows it does)."""
        return self.cursor.name

    @property
    def training_dir(self) -> Path:
        return self.run_dir / "training"

    @property
    def is_main(self) -> bool:
        return self.rank == 0


@runtime_checkable
class Learner(Protocol):
    """What a model factory returns for one task.

    ``fit`` trains (or, for a model that does not train, picks few-shot examples);
    ``predict`` returns one :class:`Prediction` per example; ``save`` writes what
    ``--model <run>/<task>/model --no-train`` loads again, with the label mapping.
    Optional methods the runner calls when a learner has them: ``prepare(context)`` first,
    in every run (``--no-train`` runs skip ``fit``, yet a learner may still need the seed
    or the cache), and ``run_info() -> dict`` last, recorded as ``model_info``. When the run is
    planned, before any task trains, ``check_plan(splits)`` gets the examples of the splits the
    run will use (``"train"`` and ``"dev"``; no ``"train"`` under ``--no-train``) and raises
    ``ClueError`` for what cannot work (more few-shot demos than labelled training examples), so
    a run of several tasks never fails on a later task after writing the earlier ones.
    """

    def fit(self, train: Sequence[Example], dev: Sequence[Example], context: RunContext) -> None: ...

    def predict(self, examples: Sequence[Example]) -> list[Prediction]: ...

    def save(self, directory: Path) -> None: ...
