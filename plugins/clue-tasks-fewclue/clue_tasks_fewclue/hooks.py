"""Hook implementations of clue-tasks-fewclue; cheap to import (specs only, no reader code)."""

from __future__ import annotations

from clue_core.plugin import SubmissionWriterSpec, TaskSpec, hookimpl
from clue_tasks_fewclue.catalog import CHID_WRITER, TASKS


@hookimpl
def clue_tasks() -> list[TaskSpec]:
    return list(TASKS)


@hookimpl
def clue_submission_writers() -> list[SubmissionWriterSpec]:
    return [CHID_WRITER]
