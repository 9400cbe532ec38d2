"""The leaderboard plugin's hooks: ``submit`` and ``evaluate`` as command specs, nothing else.

``clue-core list`` and ``--help`` import this module, so it only builds specs (from
``clue_core.plugin``): the click commands and the checks they run are imported when a command
runs, and ``api`` names the function ``clue_core.api.submit`` / ``api.evaluate`` call.
"""

from __future__ import annotations

from clue_core.plugin import CommandSpec, hookimpl

EVALUATE = CommandSpec(
    name="evaluate",
    help="Score a PREDICTIONS file against gold labels, with no model.",
    command="clue_leaderboard.commands:evaluate",
    api="clue_leaderboard.evaluate:evaluate",
)
SUBMIT = CommandSpec(
    name="submit",
    help="Check the submission files of runs against their test files and pack them into one zip.",
    command="clue_leaderboard.commands:submit",
    api="clue_leaderboard.submission:build_submission",
)


@hookimpl
def clue_commands() -> list[CommandSpec]:
    return [EVALUATE, SUBMIT]
