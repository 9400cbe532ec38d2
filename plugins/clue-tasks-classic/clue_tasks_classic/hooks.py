"""Hook implementations of clue-tasks-classic; must stay cheap to import (specs only)."""

from __future__ import annotations

from clue_core.plugin import TaskSpec, hookimpl
from clue_tasks_classic.catalog import TASKS


@hookimpl
def clue_tasks() -> list[TaskSpec]:
    return list(TASKS)
