"""FewCLUE's CHID: one idiom blank per line, seven candidates; its reader and leaderboard file.

A line is ``{"id", "candidates": [7 idioms], "content": "…#idiom#…", "answer": index}``
(``test.json`` has no answer). Unlike CLUE's CHID, ``content`` is one string with exactly one
unnumbered ``#idiom#`` blank, so each line is one multiple-choice example keyed by the file's
``id``; the blank is written as ``____`` in the context, as clue-tasks-mrc writes CLUE's.

The leaderboard file ``chidf_predict.json`` is JSON Lines ``{"id": 3000, "answer": 0}``: the
answer is the candidate's index as a JSON integer, as in FewCLUE's submission examples
(``resources/fewclue_submit_examples``). Its parser also accepts an index written as a digit
string (``"6"``), the shape one baseline's example file (``baselines/models_pytorch/EFL``) uses.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from clue_core.plugin import (
    Example,
    ExampleId,
    InputError,
    MultipleChoiceExample,
    Prediction,
    SplitData,
    TaskSpec,
    atomic_open,
    iter_jsonl,
)
from clue_core.plugin import field as get
from clue_tasks_fewclue.readers import Context, data_file, read_file

TAG = "#idiom#"
BLANK = "____"


def _chid(record: dict[str, Any], line: int, ctx: Context) -> MultipleChoiceExample:
    candidates = get(record, "candidates", list, path=ctx.path, line=line)
    if not candidates or not all(isinstance(c, str) and c for c in candidates):
        raise InputError(ctx.path, "expected a non-empty list of idioms (strings)", line=line, field="candidates")
    content = ctx.text(record, "content", line)
    blanks = content.count(TAG)
    if blanks != 1:
        raise InputError(ctx.path, f"expected one {TAG} blank, found {blanks}", line=line, field="content")
    label = None
    if ctx.labelled:
        label = get(record, "answer", int, path=ctx.path, line=line)
    return MultipleChoiceExample(id=ctx.example_id(record, line), context=content.replace(TAG, BLANK), question="",
                                 choices=tuple(candidates), label=label)


def read_chid(task: TaskSpec, data_dir: Path, split: str, settings: Mapping[str, Any] | None = None) -> SplitData:
    """CHID: one example per line; the answer index is range-checked by clue-core."""
    path = data_file(task, data_dir, split, settings)
    note = f"read {path.name}" if split in ("train", "dev") else ""
    return read_file(task, path, split, _chid, note=note)


def write_answers(path: Path, examples: Sequence[Example], predictions: Sequence[Prediction]) -> None:
    """``chidf_predict.json``: one ``{"id", "answer"}`` line per test line, in the test file's order."""
    if len(examples) != len(predictions):
        raise ValueError(f"{len(predictions)} predictions for {len(examples)} examples")
    with atomic_open(path) as handle:
        for example, prediction in zip(examples, predictions):
            if str(example.id) != str(prediction.id):
                raise ValueError(f"prediction id {prediction.id!r} does not match example id {example.id!r}")
            handle.write(json.dumps({"id": example.id, "answer": prediction.value}, ensure_ascii=False) + "\n")


def read_answers(path: Path) -> list[tuple[ExampleId, Any]]:
    """Parse a ``chidf_predict.json`` into ``(id, answer index)`` pairs in file order."""
    entries: list[tuple[ExampleId, Any]] = []
    for line, record in iter_jsonl(path):
        for name in ("id", "answer"):
            if name not in record:
                raise InputError(path, "missing", line=line, field=name)
        answer = record["answer"]
        if isinstance(answer, str) and answer.isdecimal():
            answer = int(answer)
        entries.append((record["id"], answer))
    return entries
