"""C3: multiple-choice reading comprehension over dialogues (d-) and mixed texts (m-).

Each file is one JSON array of documents ``[[context strings], [questions], doc_id]``;
a question is ``{"question", "choice": [...], "answer"}`` (train/dev) or
``{"question", "choice", "id"}`` (test, where ``doc_id`` may be missing).

* train/dev read the d- file, then the m- file; their ids are the running question
  index (int, 0-based) over both files, as the files carry none.
* test1.0 / test1.1 keep the file's integer question ``id``, echoed by the submission.
* The label is the index of the ``answer`` text in ``choice`` (first occurrence).
* Choice lists are kept exactly as written: 2 to 4 choices in train/dev, and a test file
  may hold longer lists, which we keep whole (example kinds allow any count) and report
  in the split's notes, so a model can answer every choice and none is dropped. Models
  pad to the longest list; :func:`decode` makes sure a padding choice is never
  predicted.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from clue_core.plugin import (
    DataError,
    InputError,
    MultipleChoiceExample,
    Prediction,
    SplitData,
    TaskSpec,
    find_file,
    read_json,
)

USUAL_MAX_CHOICES = 4


def split_files(task: TaskSpec, split: str) -> tuple[str, ...]:
    """train/dev: the d- (dialogue) file, then the m- (mixed-genre) file; a test split: ``{split}.json``."""
    return (f"d-{split}.json", f"m-{split}.json") if split in task.splits else (f"{split}.json",)


def read(task: TaskSpec, data_dir: Path, split: str) -> SplitData:
    """Reader of the c3 task."""
    test = split not in task.splits
    examples: list[MultipleChoiceExample] = []
    where: list[str] = []
    files: list[str] = []
    for name in split_files(task, split):
        path = find_file(Path(data_dir), name)
        files.append(str(path))
        _read_file(path, test=test, examples=examples, where=where)
    notes: list[str] = []
    long_lists = sum(len(example.choices) > USUAL_MAX_CHOICES for example in examples)
    if long_lists:
        notes.append(f"questions with more than {USUAL_MAX_CHOICES} choices: {long_lists} (all choices kept)")
    return SplitData(examples=tuple(examples), notes=tuple(notes), files=tuple(files), where=tuple(where))


def _read_file(path: Path, *, test: bool, examples: list[MultipleChoiceExample], where: list[str]) -> None:
    """Append the questions of one file; ids continue the running index (train/dev) or are the file's (test)."""
    documents = read_json(path)
    if not isinstance(documents, list):
        raise InputError(path, f"expected a JSON array of documents, got {type(documents).__name__}")
    for d, document in enumerate(documents):
        dwhere = f"document {d}"
        if not isinstance(document, list) or len(document) < 2:
            raise InputError(path, "expected [context, questions, id]", record=dwhere)
        context_lines, questions = document[0], document[1]
        if not isinstance(context_lines, list) or not all(isinstance(line, str) for line in context_lines):
            raise InputError(path, "expected a list of strings", record=dwhere, field="context")
        if not isinstance(questions, list):
            raise InputError(path, f"expected a list, got {type(questions).__name__}", record=dwhere,
                             field="questions")
        context = "\n".join(context_lines)
        for q, item in enumerate(questions):
            qwhere = f"{dwhere} question {q}"
            if not isinstance(item, dict):
                raise InputError(path, f"expected an object, got {type(item).__name__}", record=qwhere)
            question = _get(item, "question", str, path, qwhere)
            choices = _get(item, "choice", list, path, qwhere)
            if len(choices) < 2 or not all(isinstance(choice, str) for choice in choices):
                raise InputError(path, "expected a list of at least 2 strings", record=qwhere, field="choice")
            if test:
                qid = _get(item, "id", int, path, qwhere)
                label = None
                where.append(f"{path} (id {qid})")
            else:
                qid = len(examples)
                answer = _get(item, "answer", str, path, qwhere)
                if answer not in choices:
                    raise InputError(
                        path, f"answer {answer!r} is not one of the choices", record=qwhere, field="answer"
                    )
                label = choices.index(answer)
                where.append(f"{path} ({qwhere})")
            examples.append(
                MultipleChoiceExample(id=qid, context=context, question=question, choices=tuple(choices), label=label)
            )


def _get(item: dict[str, Any], name: str, expected: type, path: Path, where: str) -> Any:
    if name not in item:
        raise InputError(path, "missing", record=where, field=name)
    value = item[name]
    if isinstance(value, bool) or not isinstance(value, expected):
        raise InputError(path, f"expected {expected.__name__}, got {type(value).__name__}", record=where, field=name)
    return value


def decode(examples: Sequence[MultipleChoiceExample], predictions: Sequence[Prediction | None]) -> list[Prediction]:
    """Keep every prediction inside its question's real choices.

    A model that pads choice lists to a fixed width may pick the padding: then, with
    per-choice scores, the best *real* choice replaces it; without scores an
    out-of-range index is an error rather than a silently wrong submission.
    """
    by_id = {p.id: p for p in predictions if p is not None}
    decoded: list[Prediction] = []
    for example in examples:
        prediction = by_id.get(example.id)
        if prediction is None:
            continue
        if prediction.value is None and not prediction.scores:  # no answer (an LLM's unextractable one): wrong
            decoded.append(prediction)
            continue
        n_choices = len(example.choices)
        valid = isinstance(prediction.value, int) and 0 <= prediction.value < n_choices
        if not valid and prediction.scores and len(prediction.scores) >= n_choices:
            real = list(prediction.scores)[:n_choices]
            prediction = dataclasses.replace(prediction, value=max(range(n_choices), key=real.__getitem__))
        elif not valid:
            raise DataError(
                f"c3 question {example.id}: predicted choice {prediction.value!r} but it has {n_choices} choices"
            )
        decoded.append(prediction)
    return decoded
