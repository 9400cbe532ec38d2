"""What a run is asked to do and what it will do per task: :class:`RunRequest` and :class:`TaskPlan`.

Plain dataclasses in a leaf module (it imports no other module that plans or runs) because
modules on both sides of planning name them: :mod:`clue_core.planning` builds them, while
:mod:`clue_core.splits`, :mod:`clue_core.repeats` and :mod:`clue_core.record_write` take them,
and planning imports those. Kept in planning, every such annotation was an import circle
(``tests/core/test_import_circles.py`` counts type-only imports). Both names are still
importable from :mod:`clue_core.planning` and :mod:`clue_core.runner`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from clue_core.examples import SplitData
    from clue_core.rundir import RunPaths
    from clue_core.settings import ResolvedSettings
    from clue_core.specs import TaskSpec


@dataclass
class RunRequest:
    """Everything ``clue-core run`` resolved from flags and the config file."""

    tasks: list[str]
    model: str
    data_dir: Path | None = None
    sample: bool = False
    output_dir: Path | None = None
    seed: int = 42
    settings: dict[str, Any] = field(default_factory=dict)
    task_settings: dict[str, dict[str, Any]] = field(default_factory=dict)
    overrides: dict[str, Any] = field(default_factory=dict)
    override_sources: dict[str, str] = field(default_factory=dict)  # an override's source label if not --set
    config_file: str | None = None
    no_train: bool = False
    resume: bool = False
    overwrite: bool = False
    command: list[str] = field(default_factory=list)
    limit: int | None = None
    cache_dir: Path | None = None
    splits: tuple[str, ...] | None = None  # --splits: what to predict (None: everything, or what a resumed run did)


@dataclass
class TaskPlan:
    """One task, checked and ready: its settings, its data and its learner."""

    task: TaskSpec
    paths: RunPaths
    settings: ResolvedSettings
    data_dir: Path | None = None
    splits: dict[str, SplitData] = field(default_factory=dict)
    tests: dict[str, SplitData] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    checksums: dict[str, str] = field(default_factory=dict)
    learner: Any = None
    resume: bool = False  # it continues its staging folder (planning.settle_resume decides, once)
    done: bool = False  # a complete run --resume leaves as it is (checked there to match this request)
    repeat_value: str | None = None  # the value of its task's repeat this plan runs (FewCLUE split=all)
    predict: tuple[str, ...] = ("dev",)  # the splits it predicts (clue_core.splits): dev, scored ones, test
