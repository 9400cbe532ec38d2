"""CLUEWSC2020 input: mark the noun ``_…_`` and the pronoun ``[…]`` in the text.

This is the input the official baselines feed to a sentence classifier. Offsets are
character offsets; a span that is not where its offset says is a broken record, so it
is reported rather than marked in the wrong place.
"""

from __future__ import annotations

from pathlib import Path

from clue_core.plugin import InputError

NOUN_MARKS = ("_", "_")
PRONOUN_MARKS = ("[", "]")


def mark_spans(
    text: str,
    *,
    noun: tuple[str, int],
    pronoun: tuple[str, int],
    path: str | Path = "<text>",
    line: int | None = None,
    record: str | None = None,
) -> str:
    """Return ``text`` with ``noun=(span, offset)`` wrapped in ``_`` and ``pronoun`` in ``[]``."""
    spans = []
    for name, (span, start), marks in (("span1", noun, NOUN_MARKS), ("span2", pronoun, PRONOUN_MARKS)):
        if not span:
            raise InputError(path, "empty span", line=line, field=f"target.{name}_text", record=record)
        found = text[start:start + len(span)] if 0 <= start <= len(text) else ""
        if found != span:
            raise InputError(
                path,
                f"{name}_text {span!r} is not at offset {start} (the text there is {found!r})",
                line=line,
                field=f"target.{name}_index",
                record=record,
            )
        spans.append((start, start + len(span), marks))
    (_, first_end, _), (second_start, _, _) = sorted(spans)
    if second_start < first_end:
        raise InputError(path, "the noun and pronoun spans overlap", line=line, field="target", record=record)
    marked = text
    for start, end, (left, right) in sorted(spans, reverse=True):
        marked = marked[:start] + left + marked[start:end] + right + marked[end:]
    return marked
