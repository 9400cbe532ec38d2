"""What a run returns for each task, and the table ``clue-core run`` prints of it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from clue_core.record import Metrics
from clue_core.registry import Registry  # not the Kernel: the kernel reaches this module through its checks


@dataclass
class TaskResult:
    task: str
    run_dir: Path
    metrics: dict[str, float | None]
    primary_metric: str
    counts: dict[str, int]
    submission_files: list[str]
    notes: list[str]
    partial: bool = False
    splits: tuple[str, ...] = ()  # what it predicted (--splits); without test, no submission files

    @classmethod
    def of(cls, run_dir: Path, metrics: Metrics, submission_files: Sequence[str], notes: Sequence[str],
           splits: Sequence[str] = ()) -> TaskResult:
        """A task's row from its run record: a run just made and one ``--resume`` left as it was read alike."""
        return cls(metrics.task, run_dir, dict(metrics.dev), metrics.primary_metric, dict(metrics.counts),
                   list(submission_files), list(notes), partial=metrics.partial, splits=tuple(splits))


def results_table(results: Sequence[TaskResult], kernel: Registry | None = None) -> list[list[str]]:
    """The table ``clue-core run`` prints; totals a metric declares as ``counts`` print whole."""
    rows = [["task", "primary", "dev metrics", "dev n", "submission files", "run dir"]]
    for r in results:
        primary = r.metrics.get(r.primary_metric)
        whole = _count_totals(kernel, r.task, r.metrics)
        rows.append([
            f"{r.task} (partial)" if r.partial else r.task,
            f"{r.primary_metric} {primary:.2f}" if primary is not None else "-",
            ", ".join(f"{k} -" if v is None else f"{k} {v:.0f}" if k in whole else f"{k} {v:.2f}"
                      for k, v in r.metrics.items()) or "-",
            str(r.counts.get("dev", 0)),
            ", ".join(r.submission_files) or _no_files(r, kernel),
            str(r.run_dir),
        ])
    return rows


def _no_files(result: TaskResult, kernel: Registry | None) -> str:
    """The submission files cell of a run that wrote none: why, when it is ``--splits`` that left test out
    (a task with no test set has none to write either way)."""
    from clue_core.splits import TEST, dev_only

    task = kernel.tasks.get(result.task) if kernel is not None else None
    if result.splits and TEST not in result.splits and (task is None or task.test_versions):
        return f"none: {dev_only(result.splits)}"
    return "-"


def _count_totals(kernel: Registry | None, task_name: str, totals: dict[str, float | None]) -> set[str]:
    """The totals that are counts: the task's metrics' and those of a metric the run scored beside them (a
    learner's ``extra_metrics``, such as circular evaluation's) for the task's kind, where no metric of the
    task's own produces a total of that name."""
    if kernel is None or task_name not in kernel.tasks:
        return set()
    task = kernel.tasks[task_name]
    mine = [kernel.metric(metric) for metric in task.metrics]
    own = {name for spec in mine for name in spec.counts}
    produced = {name for spec in mine for name in spec.produces}
    extra = {name for spec in kernel.metrics.values() if not spec.kinds or task.kind in spec.kinds
             for name in spec.counts if name in totals and name not in produced}
    return own | extra
