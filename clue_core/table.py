"""Plain-text tables for the terminal; wide (CJK) characters count as two columns.

Cells hold names users choose (a model name, an answers file's path, a run folder), and a
terminal acts on control characters instead of showing them: ``ESC ] 0 ; … BEL`` sets the
window title, other escapes move the cursor or rewrite what was printed. So every cell, and
every line a command prints with such a name, goes through :func:`printable`, which shows a
control character as its escape (ESC as the four characters ``\\x1b``).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

#: C0 controls, DEL and C1 controls (0x9b is a one-byte CSI), and the bidirectional overrides and
#: isolates, which reorder what follows them on the line (a name could hide or fake text).
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_CONTROL_BUT_NEWLINE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: object, *, lines: bool = False) -> str:
    """``text`` with every control character shown as its escape (``\\x1b``, ``\\x07``, ``\\u202e``).

    ``lines=True`` keeps newlines, for text of several lines (a command's output); a carriage
    return is still escaped, since it would let a name overwrite the start of its line.
    Text without control characters comes back unchanged, so escaping twice is escaping once.
    """
    return (_CONTROL_BUT_NEWLINE if lines else _CONTROL).sub(_escape, str(text))


def display_width(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def format_table(rows: Sequence[Sequence[object]]) -> str:
    """First row is the header; columns are padded to their widest cell; control characters escaped."""
    if not rows:
        return ""
    shown = [[printable(cell) for cell in row] for row in rows]
    widths = [max(display_width(row[i]) for row in shown) for i in range(len(shown[0]))]
    lines = []
    for index, row in enumerate(shown):
        cells = [cell + " " * (widths[i] - display_width(cell)) for i, cell in enumerate(row)]
        lines.append("  ".join(cells).rstrip())
        if index == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)
