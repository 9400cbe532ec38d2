"""Plain-text tables for the terminal; wide (CJK) characters count as two columns."""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence


def display_width(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def format_table(rows: Sequence[Sequence[str]]) -> str:
    """First row is the header; columns are padded to their widest cell."""
    if not rows:
        return ""
    widths = [max(display_width(str(row[i])) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for index, row in enumerate(rows):
        cells = [str(cell) + " " * (widths[i] - display_width(str(cell))) for i, cell in enumerate(row)]
        lines.append("  ".join(cells).rstrip())
        if index == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)
