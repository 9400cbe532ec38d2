"""Lone surrogates in JSON data files: ``"\\ud800"`` is valid JSON but no text.

``json.loads`` turns the escape of half a UTF-16 pair into a lone surrogate code point that
UTF-8 cannot hold, so a data file holding one was read without complaint and the run then
died with a traceback far from the cause (a tokenizer, a prompt, the cache's key), leaving its
staging folder. The readers (:mod:`clue_core.jsonio`) call :func:`check_record` and
:func:`check_document` on what they parse, so such a file is one line naming its file, line and
field, before anything is written. Only escapes can make one (the UTF-8 decoder refuses encoded
surrogates), so the raw text decides whether to look at all: a line without ``\\u`` costs one
substring test, one of escaped Chinese (``\\u4e2d``) two more, and only a ``\\uD…`` escape a
regular expression and a walk of the record (measured: within noise on 200,000 AFQMC-like lines).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from clue_core.errors import InputError

#: A ``\\u`` escape of a surrogate (``D800``–``DFFF``), with the backslashes before it (an even
#: run of them is an escaped backslash and then text, not an escape).
_ESCAPE = re.compile(r"(\\+)u([dD][89a-fA-F][0-9a-fA-F]{2})")
_LONE = re.compile("[\ud800-\udfff]")


def may_hold(text: str) -> bool:
    """Whether ``text`` (raw JSON) has a surrogate escape at all: the cheap test before any walk."""
    # two substring tests first: a file of escaped Chinese (\u4e2d…) must not pay a regular expression per line
    return ("\\ud" in text or "\\uD" in text) and _ESCAPE.search(text) is not None


def _first_lone(value: Any, where: str = "") -> tuple[str, str] | None:
    """``(field path, the string)`` of the first string (key or value) holding a lone surrogate."""
    if isinstance(value, str):
        return (where, value) if _LONE.search(value) else None
    if isinstance(value, dict):
        for key, item in value.items():
            shown = _LONE.sub(lambda m: f"\\u{ord(m.group()):04x}", str(key))  # a message must be text too
            name = f"{where}.{shown}" if where else shown
            if isinstance(key, str) and _LONE.search(key):
                return name, key
            found = _first_lone(item, name)
            if found:
                return found
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found = _first_lone(item, f"{where}[{index}]")
            if found:
                return found
    return None


def _error(path: str | Path, field: str, text: str, line: int | None) -> InputError:
    bad = _LONE.search(text)
    code = f"\\u{ord(bad.group()):04x}" if bad else "a surrogate"
    return InputError(path, f"holds the escape {code}, a lone surrogate (half of a UTF-16 pair) that is not text; "
                      f"fix or remove it", line=line, field=field or None)


def check_record(record: Any, raw_line: str, path: str | Path, line: int) -> None:
    """One JSON Lines record, parsed from ``raw_line``: refused if a string in it holds a lone surrogate."""
    if not may_hold(raw_line):
        return
    found = _first_lone(record)
    if found:
        raise _error(path, found[0], found[1], line)


def _lone_escapes(text: str) -> Iterator[int]:
    """The offsets in ``text`` of surrogate escapes that are not half of a high–low pair."""
    matches = [m for m in _ESCAPE.finditer(text) if len(m.group(1)) % 2 == 1]
    paired: set[int] = set()
    for first, second in itertools.pairwise(matches):
        high, low = int(first.group(2), 16), int(second.group(2), 16)
        if high < 0xDC00 <= low and first.end() == second.start() and len(second.group(1)) == 1:
            paired |= {first.start(), second.start()}
    for match in matches:
        if match.start() not in paired:
            yield match.start() + len(match.group(1)) - 1


def check_document(document: Any, text: str, path: str | Path) -> None:
    """A whole JSON document parsed from ``text``: refused, with the line of the escape, if a string
    in it holds a lone surrogate."""
    if not may_hold(text):
        return
    found = _first_lone(document)
    if found:
        offset = next(_lone_escapes(text), None)
        line = text.count("\n", 0, offset) + 1 if offset is not None else None
        raise _error(path, found[0], found[1], line)
