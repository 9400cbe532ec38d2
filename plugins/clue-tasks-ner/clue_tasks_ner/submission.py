"""``cluener_predict.json``, CLUENER2020's leaderboard file, written and read back.

One line per test line, in the test file's order: ``{"id": <the test line's id>, "label": {type:
{entity text: [[start, end], ...]}}}`` in the gold's own shape, offsets INCLUSIVE, ``{}`` where
nothing was found, non-ASCII written as is (as the official baselines' writers do). Types come in the
official order, entities by their first span, spans in text order.

Read back (``clue-core submit`` checks, ``clue-core evaluate cluener2020 FILE --split dev``), each
entity's spans become ``[type, start, end + 1]`` triples, the prediction value of the entity-spans
kind. A line without ``id`` takes its 0-based position among the file's lines, as a dev line's id is
(the official ``score.py`` pairs lines by position; the repository's real dev predictions carry no
id). The archive's example file spells ``goverment``: read as ``government``, with a warning. What
the kind's check refuses (an unknown type, a span past the text) is one line naming file, line and
field; so is a label that is not this shape, or an entity whose length is not its span's (the scorer
compares entity texts, the value keeps offsets: such a line could not be scored as written).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from clue_core.plugin import ExampleId, InputError, Prediction, atomic_open, iter_jsonl
from clue_tasks_ner.examples import EntitySpansExample
from clue_tasks_ner.labels import ALIASES, TYPES


def label_of(text: str, spans: Sequence[Sequence[Any]]) -> dict[str, dict[str, list[list[int]]]]:
    """``[type, start, end)`` spans -> the official ``{type: {entity text: [[start, end_inclusive]]}}``."""
    order = {kind: index for index, kind in enumerate(TYPES)}
    label: dict[str, dict[str, list[list[int]]]] = {}
    for kind, start, end in sorted({(k, s, e) for k, s, e in spans}, key=lambda s: (order.get(s[0], 99), s[1], s[2])):
        label.setdefault(kind, {}).setdefault(text[start:end], []).append([start, end - 1])
    return label


def write(path: Path, examples: Sequence[EntitySpansExample], predictions: Sequence[Prediction]) -> None:
    """One line per test example, in the test file's order, echoing the file's own id."""
    if len(examples) != len(predictions):
        raise ValueError(f"{len(predictions)} predictions for {len(examples)} examples")
    with atomic_open(path) as handle:
        for example, prediction in zip(examples, predictions):
            if str(example.id) != str(prediction.id):
                raise ValueError(f"prediction id {prediction.id!r} does not match example id {example.id!r}")
            label = label_of(example.text, prediction.value or [])
            handle.write(json.dumps({"id": example.id, "label": label}, ensure_ascii=False) + "\n")


def read(path: Path) -> list[tuple[ExampleId, Any]]:
    """Parse a ``cluener_predict.json`` into ``(id, [[type, start, end), ...])`` pairs in file order."""
    entries: list[tuple[ExampleId, Any]] = []
    aliased: list[int] = []
    for position, (line, record) in enumerate(iter_jsonl(path)):
        if "label" not in record:
            raise InputError(path, "missing", line=line, field="label")
        entries.append((record.get("id", position), spans_of(record["label"], path, line, aliased)))
    if aliased:
        import click

        spelled = ", ".join(sorted(ALIASES))
        click.echo(f"warning: {path}: {spelled} read as {', '.join(ALIASES[a] for a in sorted(ALIASES))} "
                   f"on {len(aliased)} line(s), first line {aliased[0]}", err=True)
    return entries


def spans_of(label: Any, path: Path, line: int, aliased: list[int]) -> list[list[Any]]:
    """One line's label as sorted ``[type, start, end_exclusive]`` triples; ``aliased`` gets the line of an alias."""
    if not isinstance(label, dict):
        raise InputError(path, f"expected an object {{type: {{entity text: [[start, end], ...]}}}}, "
                         f"got {type(label).__name__}", line=line, field="label")
    spans: set[tuple[Any, int, int]] = set()
    for kind, entities in label.items():
        if kind in ALIASES:
            if not aliased or aliased[-1] != line:
                aliased.append(line)
            kind = ALIASES[kind]
        if not isinstance(entities, dict):
            raise InputError(path, f"{kind}: expected an object {{entity text: [[start, end], ...]}}, "
                             f"got {type(entities).__name__}", line=line, field="label")
        for entity, offsets in entities.items():
            for start, end in _pairs(kind, entity, offsets, path, line):
                spans.add((kind, start, end + 1))
    return [list(span) for span in sorted(spans, key=lambda s: (s[1], s[2], str(s[0])))]


def _pairs(kind: str, entity: str, offsets: Any, path: Path, line: int) -> list[tuple[int, int]]:
    """An entity's inclusive ``[start, end]`` pairs; each must cover as many characters as the entity has."""
    where = f"{kind} {entity!r}"
    if not isinstance(offsets, list) or not offsets:
        raise InputError(path, f"{where}: expected a non-empty list of [start, end], got "
                         f"{json.dumps(offsets, ensure_ascii=False)}", line=line, field="label")
    pairs = []
    for pair in offsets:
        if (not isinstance(pair, list) or len(pair) != 2
                or not all(isinstance(n, int) and not isinstance(n, bool) for n in pair)):
            raise InputError(path, f"{where}: expected [start, end] integers, got "
                             f"{json.dumps(pair, ensure_ascii=False)}", line=line, field="label")
        start, end = pair
        if end - start + 1 != len(entity):
            raise InputError(path, f"{where}: span [{start}, {end}] covers {end - start + 1} characters, the "
                             f"entity has {len(entity)} (offsets inclusive)", line=line, field="label")
        pairs.append((start, end))
    return pairs
