"""A task's :class:`~clue_core.specs.Repeat` protocol: one run, a training per value of a setting.

FewCLUE's multi-split board wants a leaderboard file from each of six trainings; ``--set
split=all`` asks for all of them. Rather than teach the runner a second kind of run, each
value becomes an ordinary task plan of its own, planned here before anything is read: its own
run directory (``<task>.<setting>-<value>``, with its own lock, staging and ``--resume``), the
setting's value replaced (its source says which protocol value asked for it), and leaderboard
file names with the value's suffix. The runner then runs them as it runs any task, and
:func:`summary_line` gives the mean ± std the benchmark reports over the numbered splits.
"""

from __future__ import annotations

import dataclasses
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from clue_core.rundir import RunPaths
from clue_core.specs import TaskSpec, TestVersion

if TYPE_CHECKING:
    from clue_core.plans import TaskPlan
    from clue_core.results import TaskResult


def expand(plan: TaskPlan, output_dir: Path) -> list[TaskPlan]:
    """The plan itself, or, when its settings ask for the task's repeat value, one plan per value."""
    repeat = plan.task.repeat
    if repeat is None or plan.settings.values.get(repeat.setting) != repeat.value:
        return [plan]
    asked = plan.settings.sources.get(repeat.setting, "")
    plans = []
    for value in repeat.each:
        settings = dataclasses.replace(plan.settings, values={**plan.settings.values, repeat.setting: value},
                                       sources={**plan.settings.sources,
                                                repeat.setting: f"{repeat.setting}={repeat.value} ({asked})"})
        # a plan of its own (not a copy: its splits, tests and notes must not be the first one's)
        plans.append(type(plan)(for_value(plan.task, value), RunPaths(output_dir / f"{plan.task.name}."
                                                                      f"{repeat.setting}-{value}"), settings,
                                repeat_value=value))
    return plans


def for_value(task: TaskSpec, value: str) -> TaskSpec:
    """The task as one of its repeats runs it: its leaderboard files named with the value's suffix
    (``submit`` checks a repeat's run with it, found by the ``repeat`` its manifest records)."""
    suffix = task.repeat.suffixes.get(value, f"_{value}") if task.repeat else ""
    return dataclasses.replace(task, test_versions=tuple(
        TestVersion(v.version, v.split, suffixed(v.submission_file, suffix)) for v in task.test_versions))


def suffixed(name: str, suffix: str) -> str:
    """``eprstmt_predict.json`` with ``_0`` → ``eprstmt_predict_0.json``."""
    stem, dot, extension = name.rpartition(".")
    return f"{stem}{suffix}.{extension}" if dot else f"{name}{suffix}"


def summary_line(task: TaskSpec, plans: Sequence[TaskPlan], results: Sequence[TaskResult]) -> str | None:
    """``fewclue-eprstmt split=all: accuracy 61.25 ± 2.10 over split 0, 1, 2, 3, 4`` for a repeated
    task whose averaged values all ran, else None."""
    repeat = task.repeat
    if repeat is None:
        return None
    scores = {}
    for plan, result in zip(plans, results):
        if plan.task.name == task.name and plan.settings.values.get(repeat.setting) in repeat.averaged:
            scores[plan.settings.values[repeat.setting]] = result.metrics.get(task.primary_metric)
    values = [scores[v] for v in repeat.averaged if isinstance(scores.get(v), (int, float))]
    if not values or len(values) != len(repeat.averaged):
        return None
    spread = statistics.stdev(values) if len(values) > 1 else 0.0
    return (f"{task.name} {repeat.setting}={repeat.value}: {task.primary_metric} {statistics.fmean(values):.2f} "
            f"± {spread:.2f} over {repeat.setting} {', '.join(repeat.averaged)}")


def repeat_problems(task: TaskSpec) -> list[str]:
    """A repeat runs once per value of one of the reader's own settings: each value must be one it takes."""
    repeat = task.repeat
    setting = next((s for s in task.reader_settings if s.name == getattr(repeat, "setting", None)), None)
    if setting is None:
        return [f"repeat names setting {getattr(repeat, 'setting', None)!r}, which is not one of its reader_settings"]
    allowed = setting.choices
    wanted = (repeat.value, *repeat.each, *repeat.averaged)  # type: ignore[union-attr]
    problems = [f"repeat value {v!r} is not one of setting {setting.name!r}'s choices"
                for v in dict.fromkeys(wanted) if allowed and v not in allowed]
    if repeat.value in repeat.each or not repeat.each:  # type: ignore[union-attr]
        problems.append("repeat must run at least one value, and not the value that asks for all of them")
    problems += [f"repeat averages {v!r}, which it does not run" for v in repeat.averaged  # type: ignore[union-attr]
                 if v not in repeat.each]  # type: ignore[union-attr]
    return problems
