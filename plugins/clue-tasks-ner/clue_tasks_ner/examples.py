"""The entity-spans kind: a text and its typed spans; a prediction is a set of typed spans.

This plugin declares the kind (``clue_kinds``); model plugins recognise it by its name,
``"entity_spans"``, and read the example's fields by name, never importing this package. Spans are
``(type, start, end)`` with ``end`` EXCLUSIVE, so ``text[start:end]`` is the entity text: Python's own
convention, which a model's offsets map onto directly. The official files' inclusive ``[start, end]``
is converted once, by the reader, and back once, by the submission writer.

The checks here are the kernel's for every example a reader returns (``check_example``) and every
value a run's predictions or a leaderboard file give (``check_prediction``). Both words their problem
in one line; the kernel adds the file and line.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

# the kind's name, the contract with model plugins (they define their own constant with this string)
from clue_tasks_ner.labels import ENTITY_SPANS as ENTITY_SPANS

if TYPE_CHECKING:
    from clue_core.plugin import ExampleId, TaskSpec


#: One typed span: ``(type, start, end)``, ``end`` exclusive.
Span = tuple[str, int, int]
Problem = tuple[str, str] | None


@dataclass(frozen=True, slots=True)
class EntitySpansExample:
    """One line of a CLUENER2020 file.

    ``id`` is the official id (test) or the 0-based line index (train and dev carry none);
    ``entities`` are the gold spans sorted by ``(start, end, type)``, None on test.
    """

    id: ExampleId
    text: str
    entities: tuple[Span, ...] | None = None


def gold(example: EntitySpansExample) -> list[list[Any]] | None:
    """The gold as a run records it beside each prediction: a list of ``[type, start, end]`` lists.

    ``gold_of(example)`` returns this (the kind's ``gold``), what metrics, reports and a run's records
    compare with; models read the ``entities`` field itself.
    """
    return None if example.entities is None else [list(span) for span in example.entities]


def span_problem(labels: tuple[str, ...], text: str, span: Any) -> str | None:
    """What is wrong with one ``[type, start, end]`` for ``text``, or None (shared by both checks)."""
    if not isinstance(span, (list, tuple)) or len(span) != 3:
        return f"expected a [type, start, end] triple, got {json.dumps(span, ensure_ascii=False, default=str)}"
    kind, start, end = span
    if not isinstance(kind, str):
        return f"expected a type string, got {json.dumps(kind, ensure_ascii=False, default=str)}"
    if labels and kind not in labels:
        return f"unknown entity type {kind!r} (known: {', '.join(labels)})"
    if not all(isinstance(n, int) and not isinstance(n, bool) for n in (start, end)):
        return f"expected integer offsets, got {json.dumps([start, end], ensure_ascii=False, default=str)}"
    if not 0 <= start < end <= len(text):
        return f"span [{start}, {end}) of {kind} (end exclusive) is not inside the text (length {len(text)})"
    return None


def check_example(task: TaskSpec, example: EntitySpansExample) -> Problem:
    """Every gold span is a known type and lies inside the text, non-empty.

    Whether the file's entity text equals the text at its offsets is the reader's note, not an
    error here: the example keeps only the offsets, and a real file must stay readable.
    """
    for span in example.entities or ():
        problem = span_problem(task.labels, example.text, span)
        if problem:
            return "label", problem
    return None


def check_prediction(task: TaskSpec, example: EntitySpansExample, value: Any) -> str | None:
    """A prediction is a list of ``[type, start, end]`` triples inside the example's text."""
    if not isinstance(value, (list, tuple)):
        shown = json.dumps(value, ensure_ascii=False, default=str)
        return f"expected a list of [type, start, end] triples, got {shown}"
    for span in value:
        problem = span_problem(task.labels, example.text, span)
        if problem:
            return problem
    return None
