"""CLUEWSC input: the text with the noun marked ``_…_`` and the pronoun ``[…]``.

This is the single-sentence input CLUE's baselines build for CLUEWSC2020, so FewCLUE's
CLUEWSC reads the same way. Offsets are character offsets; a span that is not where its
offset says is a broken record, reported with its line rather than marked in the wrong place.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from clue_core.plugin import InputError

MARKS = {"span1": ("_", "_"), "span2": ("[", "]")}


def _part(target: dict[str, Any], name: str, expected: type, path: Path, line: int, record: str) -> Any:
    value = target.get(name)
    if not isinstance(value, expected) or isinstance(value, bool):
        got = "missing" if name not in target else f"expected {expected.__name__}, got {type(value).__name__}"
        raise InputError(path, got, line=line, field=f"target.{name}", record=record)
    return value


def marked_text(text: str, record: dict[str, Any], path: Path, line: int, where: str) -> str:
    """``text`` with ``target.span1`` (the noun) wrapped in ``_`` and ``target.span2`` (the pronoun) in ``[]``."""
    target = record.get("target")
    if not isinstance(target, dict):
        problem = "missing" if "target" not in record else f"expected an object, got {type(target).__name__}"
        raise InputError(path, problem, line=line, field="target", record=where)
    spans = []
    for name, (left, right) in MARKS.items():
        span = _part(target, f"{name}_text", str, path, line, where)
        start = _part(target, f"{name}_index", int, path, line, where)
        if not span:
            raise InputError(path, "empty span", line=line, field=f"target.{name}_text", record=where)
        found = text[start:start + len(span)] if 0 <= start <= len(text) else ""
        if found != span:
            raise InputError(path, f"{name}_text {span!r} is not at offset {start} (the text there is {found!r})",
                             line=line, field=f"target.{name}_index", record=where)
        spans.append((start, start + len(span), left, right))
    (_, first_end, _, _), (second_start, _, _, _) = sorted(spans)
    if second_start < first_end:
        raise InputError(path, "the noun and pronoun spans overlap", line=line, field="target", record=where)
    marked = text
    for start, end, left, right in sorted(spans, reverse=True):
        marked = marked[:start] + left + marked[start:end] + right + marked[end:]
    return marked
