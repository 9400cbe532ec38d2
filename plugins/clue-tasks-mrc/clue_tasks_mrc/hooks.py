"""Hook implementations of clue-tasks-mrc; must stay cheap to import (specs only)."""

from __future__ import annotations

from clue_core.hookspecs import hookimpl


@hookimpl
def clue_tasks() -> list:
    return []
