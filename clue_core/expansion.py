"""The plan-expansion point's types: what a task plugin subclasses to make several plans of one.

A leaf apart from :mod:`clue_core.plans` (which re-exports both names) because ``clue_core.plugin``
exports them to every hook module: FewCLUE's catalog builds its ``Repeat`` when ``clue-core list``
loads it, and the plan and request dataclasses beside them cost that start-up for nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from clue_core.specs import SpecMixin

if TYPE_CHECKING:
    from clue_core.specs import TaskSpec

#: Each expanded plan's ``(settings values, metrics)``, as :meth:`PlanExpansion.summary` reads them.
Runs = Sequence[tuple[Mapping[str, Any], Mapping[str, Any]]]


@dataclass(frozen=True, slots=True)
class PlanVariant:
    """One plan a :class:`PlanExpansion` makes of a task's plan (``split=3`` of FewCLUE's ``split=all``)."""

    task: TaskSpec  # the task as the variant runs it (FewCLUE: its leaderboard files' suffix)
    settings: Mapping[str, Any]  # the setting values it changes ...
    sources: Mapping[str, str]  # ... and where each came from (what asked for the variants)
    suffix: str  # its run folder is <task name><suffix> (".split-0")
    record: Mapping[str, str]  # what its manifest records under "repeat"; submit finds the variant by it
    family: str  # what asks for every variant, as messages name them together ("split=all")


class PlanExpansion(SpecMixin):
    """A task's ``repeat``: what turns one plan of the task into several, defined by the task's plugin
    (FewCLUE's ``Repeat``), so the kernel knows no protocol of any benchmark. A subclass is a frozen
    dataclass (its fields are what ``info --json`` shows); the kernel asks :meth:`expand` once, in
    planning, prints :meth:`summary` after the runs, adds :meth:`problems` to the task's checks and
    shows :meth:`describe` in ``info``; ``submit`` asks :meth:`expand` for every variant."""

    __slots__ = ()

    def expand(self, task: TaskSpec, values: Mapping[str, Any] | None, sources: Mapping[str, str]
               ) -> Sequence[PlanVariant]:
        """The plans a plan of ``task`` with these setting values (and sources) runs instead: none where
        it runs as it is; ``values=None`` asks for every variant (``submit`` wants a file of each)."""
        raise NotImplementedError

    def summary(self, task: TaskSpec, runs: Runs) -> str | None:
        """A line printed once the variants ran (FewCLUE's mean ± std), from each one's settings and metrics."""
        return None

    def problems(self, task: TaskSpec) -> list[str]:
        """What is wrong with this expansion for ``task`` (a setting its reader does not declare)."""
        return []

    def describe(self) -> str:
        """What ``clue-core info`` says of it (after ``repeat:``)."""
        return ""


def expansion_problems(task: TaskSpec) -> list[str]:
    """What is wrong with a task's ``repeat`` (its own checks against the task), for the task's checks."""
    if task.repeat is None:
        return []
    if not isinstance(task.repeat, PlanExpansion):
        return [f"repeat must be a PlanExpansion (clue_core.plugin), got {type(task.repeat).__name__}"]
    return list(task.repeat.problems(task))


def expansion_info(task: TaskSpec) -> list[tuple[str, str]]:
    """``clue-core info``'s ``(label, text)`` for a task's ``repeat``: what its plugin's expansion says."""
    return [] if task.repeat is None else [("repeat", task.repeat.describe())]
