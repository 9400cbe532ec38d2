"""The ``clue-core`` console script: Ctrl-C at any moment, even while the CLI is still importing.

Importing the CLI and its plugins takes a noticeable fraction of a second (more on a loaded
machine); a SIGINT in that window used to print a ``KeyboardInterrupt`` traceback from deep inside
an import. This module imports nothing of clue-core's until :func:`main` runs, so the console
script's own import cannot be interrupted half-way, and an interrupt during the CLI's import is
exit 130 with one line, as it is everywhere else.
"""

from __future__ import annotations

import sys


def main() -> None:
    """Import and run the CLI; a Ctrl-C before the CLI has taken over is exit 130, no traceback."""
    try:
        from clue_core.cli import main as cli_main
    except KeyboardInterrupt:
        print("clue-core: interrupted while starting", file=sys.stderr)
        sys.exit(130)
    cli_main()
