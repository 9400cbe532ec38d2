"""What a run is asked to do and what it will do: :class:`RunRequest`, :class:`TaskPlan` per task and
:class:`RunPlan`, the finished plan planning hands the runner, and the one point where a task's plan
becomes several (:class:`PlanExpansion`, :func:`expand`).

Plain dataclasses in a leaf module (it imports no other module that plans or runs) because
modules on both sides of planning name them: :mod:`clue_core.planning` builds them, while
:mod:`clue_core.resume` and :mod:`clue_core.record_write` take them, and planning imports those.
Kept in planning, every such annotation was an import circle (``tests/core/test_import_circles.py``
counts type-only imports). Both names are still importable from :mod:`clue_core.planning` and
:mod:`clue_core.runner`.

A task's ``repeat`` (FewCLUE's ``--set split=all``: six trainings, a leaderboard file from each) is
its plugin's :class:`PlanExpansion`. Rather than teach the runner a second kind of run, planning
asks it once (:func:`expand`) which ordinary plans the task's plan becomes: each its own task spec
variant, its changed settings (their sources saying what asked for them), its run folder
(``<task><suffix>``, with its own lock, staging and ``--resume``) and what its manifest records
under ``repeat``. The runner runs them as it runs any task and prints the expansion's summary line.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clue_core.expansion import PlanExpansion as PlanExpansion  # both re-exported: a leaf of their own
from clue_core.expansion import PlanVariant as PlanVariant
from clue_core.expansion import Runs
from clue_core.expansion import expansion_info as expansion_info
from clue_core.expansion import expansion_problems as expansion_problems

if TYPE_CHECKING:
    from clue_core.examples import SplitData
    from clue_core.rundir import RunLock, RunPaths
    from clue_core.settings import ResolvedSettings
    from clue_core.specs import ModelSpec, TaskSpec


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
    first: bool = False  # --first N: the limit's examples are the first N in file order, not a seeded draw
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
    extra_metrics: tuple[str, ...] = ()  # the metrics its learner adds to the task's (checked before any task runs)
    scoring: Any = None  # its TaskScoring, bound with the dev examples before any task runs (runner)
    resume: bool = False  # it continues its staging folder (resume.settle decides, once)
    resumed_files: Any = None  # the data files its staging folder started with (compared once data is read)
    done: bool = False  # a complete run --resume leaves as it is (checked there to match this request)
    repeat: Mapping[str, str] = field(default_factory=dict)  # its manifest's "repeat": the variant it runs
    summary: Callable[[Runs], str | None] | None = None  # the line after its expansion's runs (expand)
    predict: tuple[str, ...] = ("dev",)  # the splits it predicts (clue_core.splits): dev, scored ones, test


@dataclass
class RunPlan:
    """A run as planning hands it to the runner: the model (resolved once), the output folder and each
    task's checked plan; for a run (not ``--dry-run``) its locks too, held until :meth:`release`."""

    model: ModelSpec
    argument: str | None
    output_dir: Path
    plans: list[TaskPlan]
    locks: list[RunLock] = field(default_factory=list)
    # the topmost folder this run made for the output folder (it or a parent): a failed run removes the empty
    # folders it made again, up to that one (``-o a/b/out`` left ``a/b`` behind)
    created: Path | None = None

    def release(self, failed: bool = False) -> None:
        """Every lock released; after a failure the output folder too, when this run made it and it is empty."""
        for lock in self.locks:
            lock.release()
        if failed and self.created is not None:
            for folder in (self.output_dir, *self.output_dir.parents):
                try:  # only an empty folder this run created goes
                    folder.rmdir()
                except OSError:
                    break
                if folder == self.created:
                    break


def expand(plan: TaskPlan) -> list[TaskPlan]:
    """The plan itself, or the plans its task's ``repeat`` makes of it: each a plan of its own (not a
    copy: its splits, tests and notes must not be the first one's), its folder beside the plan's."""
    expansion = plan.task.repeat
    variants = () if expansion is None else expansion.expand(plan.task, plan.settings.values, plan.settings.sources)
    if not variants:
        return [plan]

    def summary(runs: Runs) -> str | None:  # one per expanded plan: the runner groups its variants' runs by it
        return expansion.summary(plan.task, runs)  # type: ignore[no-any-return]

    return [TaskPlan(v.task, type(plan.paths)(plan.paths.final.with_name(f"{plan.task.name}{v.suffix}")),
                     dataclasses.replace(plan.settings, values={**plan.settings.values, **v.settings},
                                         sources={**plan.settings.sources, **v.sources}),
                     repeat=dict(v.record), summary=summary) for v in variants]
