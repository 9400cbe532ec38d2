"""Readers for the SQuAD-style CMRC2018 and DRCD files.

One JSON document per file: ``data[].paragraphs[].{context, qas[].{id, question,
answers[].{text, answer_start}}}``. Every answer offset is checked against its context,
because a model trained on a shifted span learns the wrong thing silently; a mismatch is
an error naming the question id. The one exception is an answer whose text sits within
``MAX_SHIFT`` characters of its offset: it is moved there and counted in the split's notes,
so a few slightly-off offsets cannot stop a whole official split from being read (the
CMRC2018 baseline's preprocessing tolerates such shifts too). The test files carry placeholder answers
(``FAKE_ANSWER_n`` at ``answer_start -1``); they are recognised and dropped
(``answers=None``), so they can never be scored. DRCD stays in Traditional Chinese:
nothing is converted, and predicted spans are cut from the context's own characters.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from clue_core.data import find_file
from clue_core.errors import InputError
from clue_core.examples import SpanExample, SplitData
from clue_core.jsonio import field, read_json

_PLACEHOLDER = re.compile(r"FAKE_ANSWER_\d+")
MAX_SHIFT = 3
TEST_SPLITS = ("test",)


def is_placeholder(text: str, start: int) -> bool:
    """A test file's stand-in answer: ``FAKE_ANSWER_n`` text or a negative offset."""
    return start < 0 or bool(_PLACEHOLDER.fullmatch(text))


def read_squad_file(path: Path, *, test: bool, shifted: list[str] | None = None) -> list[SpanExample]:
    """All questions of one SQuAD-style file, in file order.

    The ids of questions whose answer offsets were moved (see the module docstring) are
    appended to ``shifted`` when given.
    """
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
                if qid in seen:
                    raise InputError(path, "duplicate question id", record=str(qid), field="id")
                seen.add(qid)
                question = _field(qa, "question", str, path, str(qid))
                answers = _read_answers(qa, context, path, str(qid), test=test, shifted=shifted)
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
    qa: dict[str, Any], context: str, path: Path, qid: str, *, test: bool, shifted: list[str] | None = None
) -> tuple[tuple[str, int], ...] | None:
    raw = qa.get("answers", [] if test else None)
    if raw is None:
        raise InputError(path, "missing", record=qid, field="answers")
    if not isinstance(raw, list):
        raise InputError(path, f"expected a list, got {type(raw).__name__}", record=qid, field="answers")
    answers: list[tuple[str, int]] = []
    placeholders = 0
    for i, answer in enumerate(raw):
        name = f"answers[{i}]"
        if not isinstance(answer, dict):
            raise InputError(path, f"expected an object, got {type(answer).__name__}", record=qid, field=name)
        text = _field(answer, "text", str, path, qid, prefix=name)
        start = _field(answer, "answer_start", int, path, qid, prefix=name)
        if is_placeholder(text, start):
            placeholders += 1
            continue
        if context[start : start + len(text)] != text and text:
            moved = nearby_offset(context, text, start)
            if moved is not None:
                if shifted is not None:
                    shifted.append(qid)
                answers.append((text, moved))
                continue
            found = context[start : start + len(text)]
            raise InputError(
                path,
                f"answer {text!r} is not at offset {start} of the context (found {found!r} there)",
                record=qid,
                field=f"{name}.answer_start",
            )
        answers.append((text, start))
    if test:
        return None  # never scored, whatever the file holds
    if placeholders:
        raise InputError(
            path,
            "placeholder answer (FAKE_ANSWER_n / answer_start -1) in a split with gold answers: is this a test file?",
            record=qid,
            field="answers",
        )
    if not answers:
        raise InputError(path, "no answers", record=qid, field="answers")
    return tuple(answers)


def _require_object(value: Any, path: Path, where: str) -> None:
    if not isinstance(value, dict):
        raise InputError(path, f"expected an object, got {type(value).__name__}", record=where)


def _field(record: dict[str, Any], name: str, expected: Any, path: Path, where: str, *, prefix: str = "") -> Any:
    try:
        return field(record, name, expected, path=path)
    except InputError as error:
        raise InputError(path, error.reason, record=where, field=f"{prefix}.{name}" if prefix else name) from None


def _reader(files: dict[str, str]):
    def read(data_dir: Path, split: str) -> SplitData:
        if split not in files:
            raise InputError(data_dir, f"unknown split {split!r} (known: {', '.join(files)})")
        path = find_file(Path(data_dir), files[split])
        assert path is not None
        shifted: list[str] = []
        examples = read_squad_file(path, test=split in TEST_SPLITS, shifted=shifted)
        notes = ()
        if shifted:
            notes = (f"{path.name}: moved {len(shifted)} answer offset(s) by at most {MAX_SHIFT} characters to "
                     f"where the answer text sits (first: question {shifted[0]})",)
        return SplitData(examples=tuple(examples), files=(str(path),), notes=notes)

    return read


#: ``reader`` of the cmrc2018 task (train, dev, trial, test).
read_cmrc2018 = _reader({"train": "train.json", "dev": "dev.json", "trial": "trial.json", "test": "test.json"})
#: ``reader`` of the drcd task (train, dev, test); Traditional Chinese, read as is.
read_drcd = _reader({"train": "train.json", "dev": "dev.json", "test": "test.json"})
