"""How an example of a kind the built-in three do not cover is shown: by the kind's name and its fields.

The report imports no task plugin: a kind is known by its name (``task.kind``) and an example by its
field names, as a model plugin knows them. Two kinds have a view of their own, the others the generic one:

* ``entity_spans`` (CLUENER2020): the ``text``; gold and prediction as the entity strings with their
  types (``张三 (name) · 北京 (address)``), read from ``[type, start, end)`` spans of the text;
* ``kbqa_triple`` (KgCLUE): the ``question``, the KB ``candidates`` where the run had a knowledge base;
  gold the ``subject ||| predicate ||| object`` answer (the prediction already is one);
* any other kind (a third party's): every field of the example but its id, as text, and the gold as the
  kind's ``record_gold`` writes it (:func:`clue_core.plugin.recorded_gold`), so nothing is left blank.

An answer is right (:func:`right`) when it equals the gold: for entity spans as a set of spans (their order
is no answer), for any other kind as the record holds them. It is asked only where the run's metric gives
no per-example value to judge by.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from clue_core.plugin import ClueError, TaskSpec, recorded_gold

ENTITY_SPANS = "entity_spans"
KBQA_TRIPLE = "kbqa_triple"
#: The longest text kept of one generic field (characters).
FIELD = 2000
NONE = "—"


def text_of(value: Any, width: int = FIELD) -> str:
    """``value`` as one readable text: a string as it is, anything else as JSON (CJK kept), cut at ``width``."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= width else text[:width] + f"… ({len(text) - width} more characters)"


def _spans(value: Any) -> list[tuple[str, int, int]] | None:
    """``value`` as ``(type, start, end)`` spans, or None when it is not a list of such triples."""
    if not isinstance(value, (list, tuple)):
        return None
    found = []
    for span in value:
        if not (isinstance(span, (list, tuple)) and len(span) == 3 and isinstance(span[0], str)
                and all(isinstance(n, int) and not isinstance(n, bool) for n in span[1:])):
            return None
        found.append((span[0], span[1], span[2]))
    return found


def entities(text: str, value: Any) -> str:
    """Typed spans of ``text`` as their strings: ``张三 (name) · 北京 (address)``; ``—`` for none."""
    spans = _spans(value)
    if spans is None:
        return NONE if value is None else text_of(value)
    shown = [f"{text[start:end] if 0 <= start < end <= len(text) else f'[{start}, {end})'} ({kind})"
             for kind, start, end in sorted(spans, key=lambda s: (s[1], s[2], s[0]))]
    return " · ".join(shown) or "(no entities)"


def _fields(example: Any) -> list[tuple[str, Any]]:
    """The example's fields by name (a dataclass's, else its attributes), its id left out."""
    if dataclasses.is_dataclass(example):
        pairs = [(f.name, getattr(example, f.name, None)) for f in dataclasses.fields(example)]
    else:
        pairs = list(getattr(example, "__dict__", {}).items())
    return [(name, value) for name, value in pairs if name != "id" and not name.startswith("_")]


def gold_text(task: TaskSpec, example: Any) -> str:
    """The example's gold as the report shows it."""
    if task.kind == ENTITY_SPANS and isinstance(getattr(example, "text", None), str):
        return entities(example.text, getattr(example, "entities", None))
    try:
        gold = recorded_gold(example)
    except ClueError as exc:  # the kind's own bug: said in the cell, not a failed report
        return f"(gold cannot be read: {exc})"
    return NONE if gold is None or gold == "" else text_of(gold)


def view(task: TaskSpec, example: Any) -> dict[str, Any]:
    """The example's inputs: ``text`` or ``question`` where the kind has one, and ``fields`` (``[name, text]``
    pairs) for the rest a reader needs; the gold is :func:`gold_text`'s."""
    if task.kind == ENTITY_SPANS and isinstance(getattr(example, "text", None), str):
        return {"text": example.text}
    if task.kind == KBQA_TRIPLE and isinstance(getattr(example, "question", None), str):
        candidates = getattr(example, "candidates", None) or ()
        shown: dict[str, Any] = {"question": example.question}
        if candidates:
            shown["fields"] = [["candidates", text_of("\n".join(" ||| ".join(map(str, c)) if isinstance(
                c, (list, tuple)) else str(c) for c in candidates))]]
        return shown
    return {"fields": [[name, text_of(value)] for name, value in _fields(example) if value is not None]}


def value_text(task: TaskSpec, example: Any, value: Any) -> str:
    """A prediction as the report shows it (entity spans as their strings)."""
    if value is None:
        return NONE
    if task.kind == ENTITY_SPANS and isinstance(getattr(example, "text", None), str):
        return entities(example.text, value)
    return text_of(value)


def right(task: TaskSpec, example: Any, value: Any) -> bool | None:
    """Whether ``value`` is the gold answer; None where the example has no gold (or it cannot be read)."""
    try:
        gold = recorded_gold(example)
    except ClueError:
        return None
    if gold is None:
        return None
    if task.kind == ENTITY_SPANS:
        mine, theirs = _spans(value), _spans(gold)
        if mine is not None and theirs is not None:
            return set(mine) == set(theirs)
    return bool(json.dumps(value, sort_keys=True, default=str) == json.dumps(gold, sort_keys=True, default=str))
