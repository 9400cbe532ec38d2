"""FewCLUE's multi-split protocol, ``--set split=all``: one training per train/dev pair, in one run.

FewCLUE's multi-split board wants a leaderboard file from each of six trainings (``train_0`` …
``train_4`` and ``train_few_all``). Rather than the kernel knowing that protocol, a task's
``repeat`` is this plugin's :class:`Repeat`, a :class:`~clue_core.plugin.PlanExpansion`: the kernel
asks it once, in planning, which plans the task's plan becomes, and each value is an ordinary plan
of its own: its own run directory (``<task>.<setting>-<value>``, with its own lock, staging and
``--resume``), the setting's value replaced (its source says which protocol value asked for it),
and leaderboard file names with the value's suffix. The runner runs them as it runs any task and
prints :meth:`Repeat.summary`, the mean ± std the benchmark reports over the numbered splits;
``submit`` finds each run's variant by the ``repeat`` its manifest records.

Cheap to import (the catalog builds its specs with it): no reader code, no third-party module.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from clue_core.plugin import PlanExpansion, PlanVariant, TaskSpec, TestVersion


@dataclass(frozen=True, slots=True)
class Repeat(PlanExpansion):
    """Train a task once per value of one of its reader settings, in one run.

    ``--set <setting>=<value>`` (``split=all``) runs the task once for each of ``each``, every one a
    run directory of its own (``<task>.<setting>-<v>``) with everything a run has (resume, lock,
    staging), its leaderboard files named with ``suffixes[v]`` (default ``_<v>``) before the
    extension (``eprstmt_predict_0.json``, … ``_all``), and the run prints the mean ± std of the
    primary metric over ``averaged``.
    """

    setting: str
    value: str
    each: tuple[str, ...]
    averaged: tuple[str, ...] = ()
    suffixes: Mapping[str, str] = field(default_factory=dict)

    def expand(self, task: TaskSpec, values: Mapping[str, Any] | None, sources: Mapping[str, str]
               ) -> list[PlanVariant]:
        """One variant per value of ``each`` when the settings ask for ``value`` (every one for ``values=None``,
        as ``submit`` asks); none otherwise: ``split=3`` is an ordinary run."""
        if values is not None and values.get(self.setting) != self.value:
            return []
        asked = f"{self.setting}={self.value}"
        source = f"{asked} ({sources.get(self.setting, '')})"
        return [PlanVariant(self.for_value(task, value), {self.setting: value}, {self.setting: source},
                            f".{self.setting}-{value}", {"setting": self.setting, "value": value}, asked)
                for value in self.each]

    def for_value(self, task: TaskSpec, value: str) -> TaskSpec:
        """The task as the run of ``value`` runs it: its leaderboard files named with the value's suffix."""
        suffix = self.suffixes.get(value, f"_{value}")
        return dataclasses.replace(task, test_versions=tuple(
            TestVersion(v.version, v.split, suffixed(v.submission_file, suffix)) for v in task.test_versions))

    def summary(self, task: TaskSpec, runs: Sequence[tuple[Mapping[str, Any], Mapping[str, Any]]]) -> str | None:
        """``fewclue-eprstmt split=all: accuracy 61.25 ± 2.10 over split 0, 1, 2, 3, 4`` once every averaged
        value ran (``runs``: each variant's settings and metrics), else None."""
        scores = {values[self.setting]: metrics.get(task.primary_metric) for values, metrics in runs
                  if values.get(self.setting) in self.averaged}
        found = [scores[v] for v in self.averaged if isinstance(scores.get(v), (int, float))]
        if not found or len(found) != len(self.averaged):
            return None
        import statistics  # only when a repeat's summary is printed: it costs `clue-core list` ~1 ms

        spread = statistics.stdev(found) if len(found) > 1 else 0.0
        return (f"{task.name} {self.setting}={self.value}: {task.primary_metric} {statistics.fmean(found):.2f} "
                f"± {spread:.2f} over {self.setting} {', '.join(self.averaged)}")

    def problems(self, task: TaskSpec) -> list[str]:
        """A repeat runs once per value of one of the reader's own settings: each value must be one it takes."""
        setting = next((s for s in task.reader_settings if s.name == self.setting), None)
        if setting is None:
            return [f"repeat names setting {self.setting!r}, which is not one of its reader_settings"]
        allowed = setting.choices
        problems = [f"repeat value {v!r} is not one of setting {setting.name!r}'s choices"
                    for v in dict.fromkeys((self.value, *self.each, *self.averaged)) if allowed and v not in allowed]
        if self.value in self.each or not self.each:
            problems.append("repeat must run at least one value, and not the value that asks for all of them")
        problems += [f"repeat averages {v!r}, which it does not run" for v in self.averaged if v not in self.each]
        return problems

    def describe(self) -> str:
        """``--set split=all runs each of 0, 1, 2, 3, 4, few_all (mean ± std over 0, 1, 2, 3, 4)``."""
        return (f"--set {self.setting}={self.value} runs each of {', '.join(self.each)} "
                f"(mean ± std over {', '.join(self.averaged) or '-'})")


def suffixed(name: str, suffix: str) -> str:
    """``eprstmt_predict.json`` with ``_0`` → ``eprstmt_predict_0.json``."""
    stem, dot, extension = name.rpartition(".")
    return f"{stem}{suffix}.{extension}" if dot else f"{name}{suffix}"
