"""Hook implementations of clue-report: the ``report`` command, as a spec.

``clue-core list`` and ``--help`` import this module, so it builds the spec and nothing
else: the click command (and numpy, matplotlib) is imported only when ``clue-core report``
runs. Views of other plugins reach the report through their own ``clue_report_sections``.
"""

from __future__ import annotations

from clue_core.plugin import CommandSpec, hookimpl

REPORT = CommandSpec(
    name="report",
    help="Summarise runs: dev scores and leaderboard group averages; with -o, an HTML leaderboard report.",
    command="clue_report.cli:report",
)


@hookimpl
def clue_commands() -> list[CommandSpec]:
    return [REPORT]
