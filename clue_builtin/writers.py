"""The two leaderboard file shapes every CLUE task uses, and their parsers.

``jsonl_labels``: JSON Lines ``{"id", "label"}`` in test-file order (scored by position).
``json_object``: one JSON object ``{id: value}`` (CMRC2018 answers, CHID blank tags).
The parsers read such a file back for ``clue-core submit`` and ``clue-core evaluate``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from clue_core.plugin import Example, ExampleId, InputError, Prediction, atomic_open, iter_jsonl, write_json


def _check_aligned(examples: Sequence[Example], predictions: Sequence[Prediction]) -> None:
    if len(examples) != len(predictions):
        raise ValueError(f"{len(predictions)} predictions for {len(examples)} examples")
    for example, prediction in zip(examples, predictions):
        if str(example.id) != str(prediction.id):
            raise ValueError(f"prediction id {prediction.id!r} does not match example id {example.id!r}")


def write_jsonl_labels(path: Path, examples: Sequence[Example], predictions: Sequence[Prediction]) -> None:
    """One line per test example, in the test file's order, echoing the file's own id."""
    _check_aligned(examples, predictions)
    with atomic_open(path) as handle:
        for example, prediction in zip(examples, predictions):
            handle.write(json.dumps({"id": example.id, "label": prediction.value}, ensure_ascii=False) + "\n")


def read_jsonl_labels(path: Path) -> list[tuple[ExampleId, Any]]:
    """Parse a JSON Lines submission into ``(id, label)`` pairs in file order."""
    entries = []
    for line, record in iter_jsonl(path):
        for name in ("id", "label"):
            if name not in record:
                raise InputError(path, "missing", line=line, field=name)
        entries.append((record["id"], record["label"]))
    return entries


def write_json_object(path: Path, examples: Sequence[Example], predictions: Sequence[Prediction]) -> None:
    """One object keyed by the examples' ids (as strings, as JSON requires)."""
    _check_aligned(examples, predictions)
    write_json(path, {str(e.id): p.value for e, p in zip(examples, predictions)}, indent=None)


def read_json_object(path: Path) -> list[tuple[ExampleId, Any]]:
    """Parse a one-object submission; a key given twice is an error, not a silent overwrite."""

    def no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        seen: dict[str, Any] = {}
        for key, value in pairs:
            if key in seen:
                raise InputError(path, "given more than once", field=key)
            seen[key] = value
        return seen

    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise InputError(path, f"cannot read file ({exc.strerror})") from None
    try:
        data = json.loads(text, object_pairs_hook=no_duplicates)
    except json.JSONDecodeError as exc:
        raise InputError(path, f"invalid JSON: {exc.msg} (column {exc.colno})", line=exc.lineno) from None
    if not isinstance(data, dict):
        raise InputError(path, f"expected one JSON object, got {type(data).__name__}")
    return list(data.items())
