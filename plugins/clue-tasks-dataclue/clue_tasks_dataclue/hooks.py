"""Hook implementations of clue-tasks-dataclue; cheap to import (specs only, no reader code)."""

from __future__ import annotations

from clue_core.plugin import CommandSpec, MetricSpec, TaskSpec, hookimpl
from clue_tasks_dataclue.catalog import METRIC_SPEC, TASKS

DATACLUE_COMMAND = CommandSpec(
    name="dataclue",
    help="DataCLUE's data-centric tools: 'audit' ranks likely label errors (k-fold confident learning), "
         "finds duplicates and writes a corrected copy of the files.",
    command="clue_tasks_dataclue.command:dataclue",
)


@hookimpl
def clue_tasks() -> list[TaskSpec]:
    return list(TASKS)


@hookimpl
def clue_metrics() -> list[MetricSpec]:
    return [METRIC_SPEC]


@hookimpl
def clue_commands() -> list[CommandSpec]:
    return [DATACLUE_COMMAND]
