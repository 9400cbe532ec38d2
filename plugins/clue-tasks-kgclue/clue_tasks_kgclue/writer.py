"""KgCLUE's leaderboard file, ``kgclue_predict.json``, and its parser.

One JSON line per line of ``test.json``, in its order: ``{"id": <test id>, "answer": "S ||| P ||| O"}``
(KgCLUE README "提交说明"; the baseline's ``generate_submit_file.py`` writes it with
``ensure_ascii=False``), zipped as the leaderboard asks by ``clue-core submit``.

A prediction value that does not split into three parts is written as ``" |||  ||| "`` (three empty
parts): the official scorer crashes on the value itself, and scores three empty parts exactly as this
plugin's metric scores a malformed answer (all wrong), so the file is always scorable and scores as
the run did. The parser reads ``answer`` back as it is, so
``clue-core evaluate kgclue FILE`` scores a user's file, malformed answers counted, never refused.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from clue_core.plugin import Example, ExampleId, InputError, Prediction, atomic_open, iter_jsonl
from clue_tasks_kgclue.triples import answer_text, split_answer

#: What a malformed prediction is written as: three empty parts.
EMPTY_ANSWER = answer_text(("", "", ""))


def write(path: Path, examples: Sequence[Example], predictions: Sequence[Prediction]) -> None:
    """One line per test example, in the test file's order, echoing the file's own id."""
    if len(examples) != len(predictions):
        raise ValueError(f"{len(predictions)} predictions for {len(examples)} examples")
    with atomic_open(path) as handle:
        for example, prediction in zip(examples, predictions):
            if str(example.id) != str(prediction.id):
                raise ValueError(f"prediction id {prediction.id!r} does not match example id {example.id!r}")
            value = prediction.value
            answer = value if isinstance(value, str) and split_answer(value) is not None else EMPTY_ANSWER
            handle.write(json.dumps({"id": example.id, "answer": answer}, ensure_ascii=False) + "\n")


def read(path: Path) -> list[tuple[ExampleId, Any]]:
    """``(id, answer)`` pairs in file order; a line without ``id`` or ``answer`` is one error line."""
    entries = []
    for line, record in iter_jsonl(path):
        if "id" not in record:
            raise InputError(path, "missing", line=line, field="id")
        if "answer" not in record:
            raise InputError(path, "missing", line=line, field="answer")
        entries.append((record["id"], record["answer"]))
    return entries
