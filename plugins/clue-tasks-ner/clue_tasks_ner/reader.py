"""Read CLUENER2020's ``train.json`` / ``dev.json`` / ``test.json`` into entity-spans examples.

Each file is JSON Lines: ``{"text", "label": {type: {entity text: [[start, end], ...]}}}`` with
INCLUSIVE character offsets (train and dev, no id), or ``{"id", "text"}`` (test). Offsets become
``(type, start, end + 1)``. A train/dev example's id is its 0-based position among the file's lines
(blank lines skipped, as the official ``score.py`` skips them when it pairs lines by position; the
official files have none, so it is the line index).

A span whose entity text (the label's key) is not the text at its offsets is read as the offsets
say and named in the split's notes, so a real file stays readable; the official train and dev have
no such span. Anything the offsets cannot mean (a span past the text, start after end, a type not
among the ten, a label of the wrong shape) is one :class:`InputError` naming file, line and field.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from clue_core.plugin import InputError, SplitData, TaskSpec, find_file, iter_jsonl
from clue_core.plugin import field as get
from clue_tasks_ner.examples import EntitySpansExample, Span

#: How many differing entity texts a split's notes name one by one before counting the rest.
NOTED = 10


def read(task: TaskSpec, data_dir: str | Path, split: str) -> SplitData:
    """The examples of ``split`` (``train``, ``dev`` or ``test``) from ``<split>.json`` below ``data_dir``."""
    path = find_file(Path(data_dir), f"{split}.json")
    assert path is not None  # required=True raises instead
    labelled = split != "test"
    examples: list[EntitySpansExample] = []
    where: list[str] = []
    differing: list[str] = []
    for position, (line, record) in enumerate(iter_jsonl(path)):
        text = get(record, "text", str, path=path, line=line)
        if labelled:
            label = get(record, "label", dict, path=path, line=line)
            entities: tuple[Span, ...] | None = parse_label(task, label, text, path, line, differing)
            example_id: int | str = position
        else:
            entities = None
            example_id = get(record, "id", (int, str), path=path, line=line)
        examples.append(EntitySpansExample(example_id, text, entities))
        where.append(f"{path}:{line}")
    notes = differing[:NOTED]
    if len(differing) > NOTED:
        notes.append(f"{path.name}: {len(differing) - NOTED} more entities whose text differs from the text "
                     "at their offsets (each read as its offsets say)")
    return SplitData(tuple(examples), notes=tuple(notes), files=(str(path),), where=tuple(where))


def parse_label(task: TaskSpec, label: dict[str, Any], text: str, path: Path, line: int,
                differing: list[str]) -> tuple[Span, ...]:
    """``{type: {entity text: [[start, end], ...]}}`` -> sorted ``(type, start, end_exclusive)`` spans.

    Appends a note to ``differing`` for each span whose entity text is not ``text[start:end + 1]``.
    """
    spans: set[Span] = set()
    for kind, entities in label.items():
        if kind not in task.labels:
            raise InputError(path, f"unknown entity type {kind!r} (known: {', '.join(task.labels)})",
                             line=line, field="label")
        if not isinstance(entities, dict):
            raise InputError(path, f"{kind}: expected an object {{entity text: [[start, end], ...]}}, "
                             f"got {type(entities).__name__}", line=line, field="label")
        for entity, offsets in entities.items():
            for start, end in _offsets(kind, entity, offsets, text, path, line):
                if text[start:end + 1] != entity:
                    differing.append(f"{path.name}:{line}: entity {entity!r} at [{start}, {end}] is "
                                     f"{text[start:end + 1]!r} in the text")
                spans.add((kind, start, end + 1))
    return tuple(sorted(spans, key=lambda s: (s[1], s[2], s[0])))


def _offsets(kind: str, entity: str, offsets: Any, text: str, path: Path, line: int) -> list[tuple[int, int]]:
    """The inclusive ``[start, end]`` pairs of one entity, each checked to lie inside ``text``."""
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
        if not 0 <= start <= end < len(text):
            raise InputError(path, f"{where}: span [{start}, {end}] is not inside the text (length {len(text)}, "
                             "offsets inclusive)", line=line, field="label")
        pairs.append((start, end))
    return pairs
