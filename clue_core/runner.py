"""One run: the plan, then each task's data, then for each task fit → predict → decode → score → write.

Everything that can be checked is checked before a run folder is built: planning checks all that
needs no data, locks the run folders and settles ``--resume`` (:mod:`clue_core.planning`); then every
task's data is read (all splits, through the kernel's example checks) and each learner built and
asked about it. Only then is each run built in staging and put in place when complete (see
:mod:`clue_core.rundir`). A run that fails on user input or an OS error leaves nothing behind; an
interrupted one leaves its staging folder for ``--resume``.
"""

from __future__ import annotations

import random
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from clue_core import data, kinds, redaction
from clue_core.context import RunContext, process_rank
from clue_core.errors import ClueError, Interrupted, PluginError
from clue_core.examples import SplitData
from clue_core.inner_models import model_loader
from clue_core.kernel import Kernel
from clue_core.planning import (  # re-exported: the runner is where callers have always found them
    RunRequest,
    TaskPlan,
    dry_run_plan,
    plan_run,
    resolve_settings,
)
from clue_core.record import read_run
from clue_core.record_write import RunWriter, prediction_records
from clue_core.results import TaskResult, results_table
from clue_core.rundir import MODEL_DIR
from clue_core.scoring import TaskScoring
from clue_core.settings import REDACTED
from clue_core.specs import ModelSpec, TaskSpec
from clue_core.specs import resolve as resolve_ref
from clue_core.splits import recorded_splits
from clue_core.table import printable
from clue_core.task_data import read_task_data

__all__ = ["RunRequest", "TaskPlan", "TaskResult", "dry_run_plan", "plan_run", "prediction_records",
           "resolve_settings", "results_table", "run"]

Echo = Callable[[str], None]


def _limit(plan: TaskPlan, request: RunRequest) -> None:
    """``--limit`` / ``--first``: each split of the read data cut down (:func:`limited`), and a note saying so."""
    if request.limit is None:
        return
    plan.splits = {name: limited(part, request.limit, request.seed, request.first)
                   for name, part in plan.splits.items()}
    plan.tests = {name: limited(part, request.limit, request.seed, request.first)
                  for name, part in plan.tests.items()}
    if request.first:
        plan.notes.append(f"partial run: the first {request.limit} examples (or example groups) per split in file "
                          f"order (--first); not comparable with full runs and not submittable")
    else:
        plan.notes.append(f"partial run: at most {request.limit} examples (or example groups) per split, "
                          f"drawn with seed {request.seed}; not comparable with full runs and not submittable")


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


# -- running -----------------------------------------------------------------------------


def run(kernel: Kernel, request: RunRequest, echo: Echo = print) -> list[TaskResult]:
    """Plan, check and run every task of ``request``; its examples are read, scored and recorded as this
    kernel declares their kinds (``kinds.using``: a metric's ``gold_of``, the record writer), whatever
    kernel another part of the process made later with a kind of the same name."""
    with kinds.using(kernel.kinds):
        return _run(kernel, request, echo)


def _run(kernel: Kernel, request: RunRequest, echo: Echo) -> list[TaskResult]:
    # before anything is written or echoed: every declared credential in the environment as it is now
    # (a kernel loaded earlier saw an older one), then the keys this run's backends will read (planning)
    redaction.register_kernel(kernel)
    rank, world = process_rank()
    try:  # the plan, checked whole: its locks taken and --resume settled, each task once
        run = plan_run(kernel, request, rank=rank, echo=echo)
    except BaseException as exc:
        redaction.redact_exception(exc)
        raise
    model, plans = run.model, run.plans
    finished: dict[Path, TaskResult] = {}
    try:
        for plan in plans:
            if plan.done:
                finished[plan.paths.final] = _finished_result(plan)  # read whole before it is called complete
                echo(f"[{plan.paths.final.name}] {plan.paths.final} is already complete; nothing to resume")
                continue
            read_task_data(plan, request, kernel)
            _limit(plan, request)
            plan.learner = resolve_ref(model.factory)(run.argument, plan.task, plan.settings.values_for(model.settings))
            _check_learner(plan, trains=not (request.no_train and model.trains))
            plan.extra_metrics = _extra_metrics(plan.learner, kernel, plan.task)
            # every task's scoring bound before the first task runs: a later task's metric whose code does not
            # import stops the run here, not after an earlier task's run replaced its complete one (--overwrite)
            plan.scoring = TaskScoring(kernel, plan.task, plan.splits.get("dev", SplitData(())).examples,
                                       plan.settings, extra_metrics=plan.extra_metrics)
        results = []
        for plan in plans:
            if plan.done:
                results.append(finished[plan.paths.final])
                continue
            say = _scrubbed(echo, plan)  # a learner's own lines (context.echo) too: a secret is never printed
            for note in plan.notes:
                say(f"[{plan.paths.final.name}] {note}")
            say(f"[{plan.paths.final.name}] {'resuming' if plan.resume else 'running'} with model {request.model} "
                f"→ {plan.paths.final}")
            try:
                results.append(_run_task(kernel, request, model, plan, rank, world, say))
            except KeyboardInterrupt:
                raise _interrupted(plan, results) from None
        for summary in dict.fromkeys(plan.summary for plan in plans if plan.summary is not None):
            line = summary([(p.settings.values, r.metrics) for p, r in zip(plans, results) if p.summary is summary])
            if line:  # an expanded plan's line over its variants' runs (FewCLUE split=all: the mean ± std)
                echo(line)
        return results
    except BaseException as exc:
        redaction.redact_exception(exc)  # an api.run caller prints its message: a key a plugin quoted is hidden
        run.release(failed=True)
        raise
    finally:
        run.release()


def _check_learner(plan: TaskPlan, trains: bool) -> None:
    """The learner's ``check_plan(splits)`` over the splits it will see (few-shot demos it cannot draw)."""
    check = getattr(plan.learner, "check_plan", None)
    if callable(check):
        used = ("train", "dev") if trains else ("dev",)
        check({split: plan.splits[split].examples for split in used if split in plan.splits})


def _scrubbed(echo: Echo, plan: TaskPlan) -> Echo:
    """``echo`` with every secret hidden, as the writer hides it in every file: each registered one
    (:mod:`clue_core.redaction`, the keys in the environment too) and this task's secret settings at
    any length (as ``ResolvedSettings.scrub`` hides them in its files), for an ``api.run`` caller's own
    ``echo`` as well."""
    settings = plan.settings
    secrets = [str(v) for n, v in settings.values.items() if settings.declared[n].secret and v not in ("", None)]

    def say(line: str) -> None:
        for secret in secrets:
            line = line.replace(secret, REDACTED)
        echo(printable(redaction.redact_text(line), lines=True))  # a model or path's ESC shown as \x1b

    return say


def _interrupted(plan: TaskPlan, done: list[TaskResult]) -> Interrupted:
    """Ctrl-C during a task: its staging folder is kept (what it trained and cached), so say so."""
    # run folders, not task names: the runs of an expanded plan (FewCLUE's split=all) share one task name
    finished = f"; {', '.join(r.run_dir.name for r in done)} finished before" if done else ""
    name = plan.paths.final.name
    if plan.paths.interrupted():
        return Interrupted(f"interrupted: {name} is kept unfinished in {plan.paths.staging}{finished}; "
                           f"the same command with --resume continues it")
    return Interrupted(f"interrupted before {name} wrote anything{finished}")


def _extra_metrics(learner: Any, kernel: Kernel, task: TaskSpec) -> tuple[str, ...]:
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


def _finished_result(plan: TaskPlan) -> TaskResult:
    """The result of a complete run that ``--resume`` leaves as it is, from its own files."""
    try:
        record = read_run(plan.paths.final)
    except ClueError as exc:
        raise ClueError(f"{exc}; use --overwrite to run it again") from None
    return TaskResult.of(record.path, record.metrics, record.manifest.submission_files, record.manifest.notes,
                         splits=recorded_splits(record.manifest, plan.task))


def _run_task(kernel: Kernel, request: RunRequest, model: ModelSpec, plan: TaskPlan, rank: int, world: int,
              echo: Echo) -> TaskResult:
    """Read → fit → predict → score, between the writer's two entries: its start (a fresh staging folder
    and the started manifest) and its finish (every file, then the run put in place)."""
    task, paths, main = plan.task, plan.paths, rank == 0
    staging = paths.staging
    fresh = main and not plan.resume  # the writer makes a new staging folder: a failure removes it
    try:
        writer = RunWriter.start(kernel, request, model, plan, world, main=main)
        random.seed(request.seed)
        train = plan.splits.get("train", SplitData(())).examples
        dev = plan.splits.get("dev", SplitData(())).examples
        scorer = plan.scoring  # bound before any task ran (_run): context.score now, the final scores after fit
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
