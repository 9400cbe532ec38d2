"""Hook implementations of clue-report: the ``report`` command, as a spec.

``clue-core list`` and ``--help`` import this module, so it builds the spec and nothing
else: the click command (and numpy, matplotlib) is imported only when ``clue-core report``
runs. Views of other plugins reach the report through their own ``clue_report_sections``; the
report's own explorer is one such section too (:mod:`clue_report.explorer`).
"""

from __future__ import annotations

from clue_core.plugin import CommandSpec, ReportSectionSpec, hookimpl

REPORT = CommandSpec(
    name="report",
    help="Summarise runs: dev scores and leaderboard group averages; with -o, an HTML leaderboard report.",
    command="clue_report.cli:report",
)

EXPLORER = ReportSectionSpec(
    name="explorer",
    title="Explorer",
    description="Every dev example of every run: inputs, gold, prediction, scores, generations, judge grades; "
                "filters kept in the link (#task=…&model=…&wrong=1&q=…).",
    build="clue_report.explorer:build",
    html="clue_report.explorer_html:html",
    markdown="clue_report.explorer_html:markdown",
    order=50,  # after the tasks' error analysis, before the sections of other plugins
)


@hookimpl
def clue_commands() -> list[CommandSpec]:
    return [REPORT]


@hookimpl
def clue_report_sections() -> list[ReportSectionSpec]:
    return [EXPLORER]
