"""Reads ``{"id", "review", "label"}`` JSON Lines files into classification examples.

Labels are checked by clue-core against the task's label list, so the reader only
turns records into examples and says which line each came from.
"""

from __future__ import annotations

from pathlib import Path

from clue_core.plugin import ClassificationExample, SplitData, TaskSpec, field, iter_jsonl


def read(task: TaskSpec, data_dir: Path, split: str) -> SplitData:
    path = Path(data_dir) / f"{split}.json"  # a missing file is reported by iter_jsonl, naming it
    examples, where = [], []
    for line, record in iter_jsonl(path):
        examples.append(ClassificationExample(
            id=field(record, "id", int, path=path, line=line),
            text=field(record, "review", str, path=path, line=line),
            label=field(record, "label", str, path=path, line=line, default=None),
        ))
        where.append(f"{path}:{line}")
    return SplitData(examples=tuple(examples), files=(str(path),), where=tuple(where))
