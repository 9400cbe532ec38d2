"""One task's run, in the two steps the runner takes it: :func:`prepare_task` before any task runs (the
learner built and asked about the data it will see, the metrics it adds checked, the task's scoring
bound), then :func:`run_task`: fit → predict → decode → score → write, between the record writer's two
entries (:class:`~clue_core.record_write.RunWriter`: its start and its finish).

Preparing every task first is what lets a run of several tasks fail on a later task's learner or
metric before an earlier task has written anything (or, with ``--overwrite``, replaced its complete run).
"""

from __future__ import annotations

import random
import shutil
import time
from collections.abc import Callable
from typing import Any

from clue_core import data
from clue_core.context import RunContext
from clue_core.errors import ClueError, PluginError
from clue_core.examples import SplitData
from clue_core.inner_models import model_loader
from clue_core.kernel import Kernel
from clue_core.plans import RunPlan, RunRequest, TaskPlan
from clue_core.record_write import RunWriter
from clue_core.results import TaskResult
from clue_core.rundir import MODEL_DIR
from clue_core.scoring import TaskScoring
from clue_core.specs import ModelSpec, TaskSpec
from clue_core.specs import resolve as resolve_ref

__all__ = ["extra_metrics", "prepare_task", "run_task"]

Echo = Callable[[str], None]


def prepare_task(kernel: Kernel, request: RunRequest, run: RunPlan, plan: TaskPlan) -> None:
    """``plan``'s learner, the metrics it adds and the task's scoring, bound into the plan once its data is read."""
    model = run.model
    plan.learner = resolve_ref(model.factory)(run.argument, plan.task, plan.settings.values_for(model.settings))
    _check_learner(plan, trains=not (request.no_train and model.trains))
    plan.extra_metrics = extra_metrics(plan.learner, kernel, plan.task)
    # every task's scoring bound before the first task runs: a later task's metric whose code does not
    # import stops the run here, not after an earlier task's run replaced its complete one (--overwrite)
    plan.scoring = TaskScoring(kernel, plan.task, plan.splits.get("dev", SplitData(())).examples,
                               plan.settings, extra_metrics=plan.extra_metrics)


def _check_learner(plan: TaskPlan, trains: bool) -> None:
    """The learner's ``check_plan(splits)`` over the splits it will see (few-shot demos it cannot draw)."""
    check = getattr(plan.learner, "check_plan", None)
    if callable(check):
        used = ("train", "dev") if trains else ("dev",)
        check({split: plan.splits[split].examples for split in used if split in plan.splits})


def extra_metrics(learner: Any, kernel: Kernel, task: TaskSpec) -> tuple[str, ...]:
    """The metrics a learner adds to its task's (``learner.extra_metrics``, optional): each one a known metric
    of the task's kind, or one line naming the learner's fault."""
    names = getattr(learner, "extra_metrics", ())
    if not isinstance(names, tuple) or not all(isinstance(name, str) for name in names):
        raise PluginError(f"{type(learner).__name__}.extra_metrics must be a tuple of metric names, got {names!r}")
    for name in names:
        metric = kernel.metric(name)
        if metric.kinds and task.kind not in metric.kinds:
            raise PluginError(f"{type(learner).__name__} adds metric {name!r}, which does not apply to "
                              f"{task.kind} tasks ({task.name})")
    return names


def run_task(kernel: Kernel, request: RunRequest, model: ModelSpec, plan: TaskPlan, rank: int, world: int,
             echo: Echo) -> TaskResult:
    """Fit → predict → score a prepared plan, between the writer's two entries: its start (a fresh staging
    folder and the started manifest) and its finish (every file, then the run put in place)."""
    task, paths, main = plan.task, plan.paths, rank == 0
    staging = paths.staging
    fresh = main and not plan.resume  # the writer makes a new staging folder: a failure removes it
    try:
        writer = RunWriter.start(kernel, request, model, plan, world, main=main)
        random.seed(request.seed)
        train = plan.splits.get("train", SplitData(())).examples
        dev = plan.splits.get("dev", SplitData(())).examples
        scorer = plan.scoring  # bound before any task ran (prepare_task): context.score now, the final scores after fit
        context = RunContext(task=task, seed=request.seed, run_dir=staging, resume=plan.resume, rank=rank,
                             world_size=world, primary_metric=task.primary_metric, score=scorer.score_dev,
                             echo=echo, limit=request.limit, cache_dir=request.cache_dir or data.clue_home() / "cache",
                             load_model=model_loader(kernel, task, plan.settings))
        started = time.perf_counter()
        prepare = getattr(plan.learner, "prepare", None)
        if callable(prepare):  # every run, trained or not: seeds, logging and caches come from the context
            prepare(context)
        if not (request.no_train and model.trains):
            plan.learner.fit(train, dev, context)
            if main and model.trains:
                plan.learner.save(staging / MODEL_DIR)
        train_seconds = time.perf_counter() - started
        scored = scorer.results(plan.learner, {v: part.examples for v, part in plan.tests.items()}, context,
                                {s: plan.splits[s].examples for s in task.scored_splits if s in plan.splits})
        metrics, files = writer.finish(scored, train_seconds)
    except OSError as exc:
        if fresh:
            shutil.rmtree(staging, ignore_errors=True)
        from clue_core.atomic import disk_fault_message  # names the file and says what to free

        raise ClueError(disk_fault_message(f"{task.name}: cannot write the run", exc)) from None
    except ClueError:
        if fresh:
            shutil.rmtree(staging, ignore_errors=True)
        raise
    return TaskResult.of(paths.final, metrics, files, plan.notes, splits=plan.predict)
