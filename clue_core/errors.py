"""Errors the CLI turns into one clear line and exit code 2.

Anything derived from :class:`ClueError` is a user-facing problem (bad input, unknown
name, missing data), never a bug; the CLI prints ``error: <message>`` without a traceback.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path


class ClueError(Exception):
    """A problem the user can fix; shown as one line, exit code 2."""

    exit_code = 2


class Interrupted(ClueError):
    """Ctrl-C (or SIGINT) during a run: one line saying what was kept and how to go on; exit 130,
    the shell's code for a process ended by SIGINT."""

    exit_code = 130


class InputError(ClueError):
    """Malformed input data: names the file, the line (or record id) and the field."""

    def __init__(
        self,
        path: str | Path,
        message: str,
        *,
        line: int | None = None,
        field: str | None = None,
        record: str | None = None,
    ) -> None:
        self.path = str(path)
        self.line = line
        self.field = field
        self.record = record
        self.reason = message
        where = self.path
        if line is not None:
            where += f":{line}"
        if record is not None:
            where += f" ({record})"
        what = f"field '{field}': {message}" if field else message
        super().__init__(f"{where}: {what}")


class UnknownNameError(ClueError):
    """An unknown task/model/metric/writer name, with close matches suggested."""


class DataError(ClueError):
    """Data could not be found, downloaded, verified or extracted."""


class PluginError(ClueError):
    """A plugin failed to load or broke a contract (shown on its row in ``clue-core list``)."""


def did_you_mean(name: str, names: Iterable[str]) -> str:
    """``"; did you mean 'task-b'?"`` for close matches, else ``""``."""
    import difflib  # only on an unknown name

    matches = difflib.get_close_matches(name, list(names), n=3, cutoff=0.6)
    if not matches:
        return ""
    return "; did you mean " + " or ".join(repr(m) for m in matches) + "?"
