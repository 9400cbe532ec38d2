"""The reader of the SQuAD-style CMRC2018 and DRCD files.

One JSON document per file: ``data[].paragraphs[].{context, qas[].{id, question,
answers[].{text, answer_start}}}``; split ``NAME`` is ``NAME.json`` (train, dev, CMRC2018's
trial, test).

Answers become ``(text, start)`` pairs. Every offset is checked against its context,
because a model trained on a shifted span learns the wrong thing silently:

* an answer whose text sits within :data:`MAX_SHIFT` characters of its offset is moved
  there and counted in the split's notes (the CMRC2018 baseline's preprocessing
  tolerates such shifts too);
* an answer with ``answer_start`` -1 is an annotator's answer that is not a verbatim
  substring of the context (the official CMRC2018 dev set has 193 of them): it is kept
  for scoring, since the official metric compares texts only, with ``start`` None, so a
  model skips it when training; the notes count them;
* any other mismatch is an error naming the question id (a file whose offsets are wrong
  by more than a few characters has been altered, e.g. converted between scripts).

The public test files carry placeholder answers (``FAKE_ANSWER_n``, recognised by their
text); test answers are never kept (``answers=None``), so they can never be scored, and a
placeholder in a split with gold answers is an error. DRCD stays in Traditional Chinese:
nothing is converted, and predicted spans are cut from the context's own characters.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from pathlib import Path
from typing import Any

from clue_core.plugin import InputError, SpanExample, SplitData, TaskSpec, field, find_file, read_json

_PLACEHOLDER = re.compile(r"FAKE_ANSWER_\d+")
#: How far (in characters) an offset may be from where its answer text really sits and
#: still be moved there, with a note.
MAX_SHIFT = 3
#: The ``answer_start`` of a gold answer that is not a verbatim substring of its context.
NO_OFFSET = -1


def is_placeholder(text: str) -> bool:
    """A test file's stand-in answer: ``FAKE_ANSWER_n``, whatever its offset."""
    return bool(_PLACEHOLDER.fullmatch(text))


@dataclass
class OffsetNotes:
    """What the reader did to offsets, question ids in file order, for the split's notes."""

    moved: list[str] = dataclass_field(default_factory=list)
    unplaced: list[str] = dataclass_field(default_factory=list)

    def lines(self, name: str) -> tuple[str, ...]:
        notes = []
        if self.moved:
            notes.append(f"{name}: moved {len(self.moved)} answer offset(s) by at most {MAX_SHIFT} characters to "
                         f"where the answer text sits (first: question {self.moved[0]})")
        if self.unplaced:
            questions = len(dict.fromkeys(self.unplaced))
            notes.append(f"{name}: {len(self.unplaced)} gold answer(s) with answer_start {NO_OFFSET} in {questions} "
                         f"question(s) (first: question {self.unplaced[0]}): not verbatim in the context, kept "
                         f"for scoring (the metric compares texts) without an offset, so training skips them")
        return tuple(notes)


def read(task: TaskSpec, data_dir: Path, split: str) -> SplitData:
    """Reader of the cmrc2018 and drcd tasks: split ``NAME`` is the file ``NAME.json``."""
    path = find_file(Path(data_dir), f"{split}.json")
    notes = OffsetNotes()
    examples = read_squad_file(path, test=split not in task.splits, notes=notes)
    where = tuple(f"{path} (id {example.id})" for example in examples)
    return SplitData(examples=tuple(examples), files=(str(path),), notes=notes.lines(path.name), where=where)


def read_squad_file(path: Path, *, test: bool, notes: OffsetNotes | None = None) -> list[SpanExample]:
    """All questions of one SQuAD-style file, in file order (see the module docstring).

    Question ids must be unique outside test files (the kernel checks test files), since
    predictions are matched to questions by id.
    """
    notes = notes if notes is not None else OffsetNotes()
    document = read_json(path)
    if not isinstance(document, dict):
        raise InputError(path, f"expected a JSON object with 'data', got {type(document).__name__}")
    articles = field(document, "data", list, path=path)
    examples: list[SpanExample] = []
    seen: set[Any] = set()
    for a, article in enumerate(articles):
        where = f"data[{a}]"
        _require_object(article, path, where)
        title = article.get("title", "")
        if not isinstance(title, str):
            raise InputError(path, f"expected a string, got {type(title).__name__}", record=where, field="title")
        for p, paragraph in enumerate(_field(article, "paragraphs", list, path, where)):
            pwhere = f"{where}.paragraphs[{p}]"
            _require_object(paragraph, path, pwhere)
            context = _field(paragraph, "context", str, path, pwhere)
            for q, qa in enumerate(_field(paragraph, "qas", list, path, pwhere)):
                qwhere = f"{pwhere}.qas[{q}]"
                _require_object(qa, path, qwhere)
                qid = _field(qa, "id", (str, int), path, qwhere)
                if not test:
                    if qid in seen:
                        raise InputError(path, "duplicate question id", record=str(qid), field="id")
                    seen.add(qid)
                question = _field(qa, "question", str, path, str(qid))
                answers = _read_answers(qa, context, path, str(qid), test=test, notes=notes)
                examples.append(SpanExample(id=qid, context=context, question=question, answers=answers, title=title))
    return examples


def nearby_offset(context: str, text: str, start: int) -> int | None:
    """The offset nearest ``start`` (at most ``MAX_SHIFT`` away) where ``text`` really sits."""
    for distance in range(1, MAX_SHIFT + 1):
        for candidate in (start - distance, start + distance):
            if candidate >= 0 and context[candidate : candidate + len(text)] == text:
                return candidate
    return None


def _read_answers(
    qa: dict[str, Any], context: str, path: Path, qid: str, *, test: bool, notes: OffsetNotes
) -> tuple[tuple[str, int | None], ...] | None:
    raw = qa.get("answers", [] if test else None)
    if raw is None:
        raise InputError(path, "missing", record=qid, field="answers")
    if not isinstance(raw, list):
        raise InputError(path, f"expected a list, got {type(raw).__name__}", record=qid, field="answers")
    parsed: list[tuple[str, int, str]] = []
    for i, answer in enumerate(raw):
        name = f"answers[{i}]"
        if not isinstance(answer, dict):
            raise InputError(path, f"expected an object, got {type(answer).__name__}", record=qid, field=name)
        text = _field(answer, "text", str, path, qid, prefix=name)
        start = _field(answer, "answer_start", int, path, qid, prefix=name)
        parsed.append((text, start, name))
    if test:
        return None  # never scored, whatever the file holds
    answers: list[tuple[str, int | None]] = []
    for text, start, name in parsed:
        if is_placeholder(text):
            raise InputError(
                path,
                f"placeholder answer {text!r} in a split with gold answers: is this a test file?",
                record=qid,
                field=f"{name}.text",
            )
        answers.append((text, _offset(context, text, start, path, qid, name, notes)))
    if not answers:
        raise InputError(path, "no answers", record=qid, field="answers")
    return tuple(answers)


def _offset(context: str, text: str, start: int, path: Path, qid: str, name: str, notes: OffsetNotes) -> int | None:
    """``start`` checked against the context: kept, moved a little, None for -1, or an error."""
    if start == NO_OFFSET:
        notes.unplaced.append(qid)
        return None
    if start >= 0 and context[start : start + len(text)] == text:
        return start
    moved = nearby_offset(context, text, start) if start >= 0 else None
    if moved is not None:
        notes.moved.append(qid)
        return moved
    if start < 0:
        problem = f"negative offset {start} (only {NO_OFFSET} marks an answer that is not in the context)"
    else:
        problem = (f"answer {text!r} is not at offset {start} of the context (found "
                   f"{context[start : start + len(text)]!r} there, and not within {MAX_SHIFT} characters)")
    raise InputError(path, problem, record=qid, field=f"{name}.answer_start")


def _require_object(value: Any, path: Path, where: str) -> None:
    if not isinstance(value, dict):
        raise InputError(path, f"expected an object, got {type(value).__name__}", record=where)


def _field(record: dict[str, Any], name: str, expected: Any, path: Path, where: str, *, prefix: str = "") -> Any:
    try:
        return field(record, name, expected, path=path)
    except InputError as error:
        raise InputError(path, error.reason, record=where, field=f"{prefix}.{name}" if prefix else name) from None
