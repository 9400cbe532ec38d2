"""Hook implementations of clue-sweep: the ``sweep`` and ``bootstrap`` commands, as specs.

``clue-core list`` and ``--help`` import this module, so it builds specs and nothing else:
the click commands (and numpy, Ray) are imported only when they run.
"""

from __future__ import annotations

from clue_core.plugin import CommandSpec, hookimpl

SWEEP = CommandSpec(
    name="sweep",
    help="Run a grid of settings × seeds from a TOML file as resumable runs (local workers or Ray); "
         "summary.json with mean ± std and the best configuration per task on dev.",
    command="clue_sweep.command:sweep",
)
BOOTSTRAP = CommandSpec(
    name="bootstrap",
    help="Paired bootstrap of two runs of one task on the same dev examples: the difference, its 95% "
         "interval and a p-value.",
    command="clue_sweep.bootstrap_cli:bootstrap",
)


@hookimpl
def clue_commands() -> list[CommandSpec]:
    return [SWEEP, BOOTSTRAP]
