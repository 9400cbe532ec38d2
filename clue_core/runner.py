"""One run, orchestrated: the plan, then each task's data and its learner, then each task's run.

Everything that can be checked is checked before a run folder is built: planning checks all that
needs no data, locks the run folders and settles ``--resume`` (:mod:`clue_core.planning`); then every
task's data is read (all splits, through the kernel's example checks, as ``--limit`` keeps them:
:mod:`clue_core.task_data`) and each learner built and asked about it, its scoring bound
(:func:`~clue_core.task_run.prepare_task`). Only then does each task run (fit → predict → decode →
score → write: :func:`~clue_core.task_run.run_task`), built in staging and put in place when complete
(see :mod:`clue_core.rundir`). A run that fails on user input or an OS error leaves nothing behind; an
interrupted one leaves its staging folder for ``--resume``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from clue_core import kinds, redaction
from clue_core.context import process_rank
from clue_core.errors import ClueError, Interrupted
from clue_core.kernel import Kernel
from clue_core.planning import (  # re-exported: the runner is where callers have always found them
    RunRequest,
    TaskPlan,
    dry_run_plan,
    plan_run,
    resolve_settings,
)
from clue_core.record import read_run
from clue_core.record_write import prediction_records
from clue_core.results import TaskResult, results_table
from clue_core.settings import REDACTED
from clue_core.splits import recorded_splits
from clue_core.table import printable
from clue_core.task_data import limited, read_task_data
from clue_core.task_run import extra_metrics as _extra_metrics  # noqa: F401  (re-exported, as limited is)
from clue_core.task_run import prepare_task, run_task

__all__ = ["RunRequest", "TaskPlan", "TaskResult", "dry_run_plan", "limited", "plan_run", "prediction_records",
           "resolve_settings", "results_table", "run"]

Echo = Callable[[str], None]


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
            read_task_data(plan, request, kernel)  # every split, as --limit / --first keeps it
            prepare_task(kernel, request, run, plan)  # its learner and scoring: a later task's fault stops it here
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
                results.append(run_task(kernel, request, model, plan, rank, world, say))
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


def _finished_result(plan: TaskPlan) -> TaskResult:
    """The result of a complete run that ``--resume`` leaves as it is, from its own files."""
    try:
        record = read_run(plan.paths.final)
    except ClueError as exc:
        raise ClueError(f"{exc}; use --overwrite to run it again") from None
    return TaskResult.of(record.path, record.metrics, record.manifest.submission_files, record.manifest.notes,
                         splits=recorded_splits(record.manifest, plan.task))
