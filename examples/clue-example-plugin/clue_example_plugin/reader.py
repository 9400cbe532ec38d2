"""Reads ``{"id", "review", "label"}`` JSON Lines files into classification examples."""

from __future__ import annotations

from pathlib import Path

from clue_core.data import find_file
from clue_core.errors import InputError
from clue_core.examples import ClassificationExample, SplitData
from clue_core.jsonio import field, iter_jsonl

LABELS = ("negative", "positive")


def read(data_dir: Path, split: str) -> SplitData:
    path = find_file(data_dir, f"{split}.json")
    examples = []
    for line, record in iter_jsonl(path):
        review = field(record, "review", str, path=path, line=line)
        label = field(record, "label", str, path=path, line=line, default=None)
        if label is not None and label not in LABELS:
            raise InputError(path, f"unknown label {label!r} (expected one of {', '.join(LABELS)})",
                             line=line, field="label")
        examples.append(ClassificationExample(id=field(record, "id", int, path=path, line=line),
                                              text=review, label=label))
    return SplitData(examples=tuple(examples), files=(str(path),))
