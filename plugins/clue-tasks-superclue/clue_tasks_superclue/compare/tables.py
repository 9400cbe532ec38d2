"""Reading the small CSV files people hand to ``compare`` (a human ranking, a filled sheet).

One place decides what a bad file gets: text that is not UTF-8 names its line, a row the
``csv`` module cannot read names its line, and blank rows are skipped, so both readers
only check their own columns.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from pathlib import Path

from clue_core.plugin import ClueError


def read_text(path: Path, hint: str = "") -> str:
    """The file as text (UTF-8, a BOM allowed), or one line naming the file and the line at fault."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ClueError(f"{path}: cannot read ({exc.strerror or exc})") from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ClueError(f"{path}:{line}: not UTF-8 text{f' ({hint})' if hint else ''}") from None


def csv_rows(path: Path, text: str) -> Iterator[tuple[int, list[str]]]:
    """``(line, cells)`` of every non-blank row, ``line`` where the row starts."""
    reader = csv.reader(io.StringIO(text, newline=""))
    while True:
        start = reader.line_num + 1
        try:
            row = next(reader, None)
        except csv.Error as exc:
            raise ClueError(f"{path}:{reader.line_num}: not a CSV row ({exc})") from None
        if row is None:
            return
        if any(cell.strip() for cell in row):
            yield start, row
