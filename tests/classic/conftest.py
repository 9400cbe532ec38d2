"""Fixtures of the clue-tasks-classic tests."""

from __future__ import annotations

import pytest

from clue_core.specs import TaskSpec
from clue_tasks_classic.catalog import task
from tests.classic.helpers import TASK_NAMES


@pytest.fixture(params=TASK_NAMES)
def spec(request: pytest.FixtureRequest) -> TaskSpec:
    """Each classic task's spec in turn."""
    return task(request.param)
