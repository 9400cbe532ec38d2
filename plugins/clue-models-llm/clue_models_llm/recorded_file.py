"""A file of recorded answers (``answers:<file>``): read and checked once, then matched to questions.

Answers collected elsewhere (a closed API, another team's run, SuperCLUE's published
answers) are scored through the same metrics as a model run only if each one reaches the
question it answers, and nothing else. So everything that can be wrong with the file is
found when the model is built, before any task runs, and said in one line naming the
file, the line and the field: a line that is not JSON, a record that is not an object, an
``id`` or ``prompt`` of the wrong type, an answer that is neither text nor a list of texts,
text holding a lone surrogate (``"\\ud800"``: JSON reads it, but no UTF-8 file can hold it, so
the run's predictions could not be written), two records with one id, or an answer field that
no record has.

A record is known by its ``index``, its position in the file (from 1), not by its line: a JSON
array written on one line puts every record on line 1.

A record answers the question whose ``id`` it carries, or failing that (``answer_match``
``auto``) the question whose prompt text it holds: ``prompt``, or ``messages[0].content``
where ``prompt`` is absent or empty (SuperCLUE's files). The answer is the record's
``answer_field``: a text, or a list of texts, one per turn. A ``null`` answer, or a record
without the field, is a record with no answer: its question is counted as missing. Texts
are kept exactly as recorded (no stripping): the task's metric decides what counts.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clue_core.plugin import ClueError
from clue_models_llm.settings import MATCHES


@dataclass(frozen=True, slots=True)
class Record:
    """One recorded answer: where it is in the file, what it is matched by, and its texts.

    ``answers`` is ``None`` for a record without an answer; ``listed`` says the file gave a
    list (one text per turn) rather than one text. ``index`` is the record's position in the
    file (from 1), which tells records apart where ``line`` does not (a one-line JSON array).
    """

    index: int
    line: int
    id: str | None
    prompt: str | None
    answers: tuple[str, ...] | None
    listed: bool


@dataclass(frozen=True, slots=True)
class Match:
    """The record that answers a question, and how it was found (``id`` or ``prompt``)."""

    record: Record
    by: str


@dataclass
class RecordedAnswers:
    """The records of one file, indexed by id and by prompt text."""

    path: Path
    sha256: str
    answer_field: str
    match: str
    records: list[Record]
    by_id: dict[str, Record] = field(default_factory=dict)
    by_prompt: dict[str, list[Record]] = field(default_factory=dict)

    @classmethod
    def read(cls, path: Path, answer_field: str, match: str) -> RecordedAnswers:
        """The file's records, checked (every problem is a :class:`ClueError` naming file, line and field)."""
        if match not in MATCHES:
            raise ClueError(f"setting 'answer_match' must be one of {', '.join(MATCHES)}, not {match!r}")
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise ClueError(f"answers: cannot read {path}: {exc.strerror or exc}") from None
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise ClueError(f"{path}: not UTF-8 text (byte {exc.start})") from None
        book = cls(path, hashlib.sha256(data).hexdigest(), answer_field, match, [])
        fields_seen: dict[str, None] = {}
        for index, (line, item) in enumerate(_items(path, text), 1):
            if not isinstance(item, dict):
                raise ClueError(f"{path} line {line}: a JSON {_json_type(item)}, not an object (one record per "
                                f"line, or a JSON array of objects)")
            fields_seen.update(dict.fromkeys(item))
            book._add(_record(path, index, line, item, answer_field))
        if not book.records:
            raise ClueError(f"{path}: no records (expected JSON Lines or a JSON array of objects)")
        if answer_field not in fields_seen:
            known = ", ".join(name for name in fields_seen if name not in ("id", "prompt", "messages")) or "none"
            raise ClueError(f"{path}: no record has the answer field {answer_field!r} (other fields: {known}); "
                            f"name it with --set answer_field=<field>")
        return book

    def _add(self, record: Record) -> None:
        self.records.append(record)
        if record.id is not None:
            earlier = self.by_id.get(record.id)
            if earlier is not None:
                raise ClueError(f"{self.path} line {record.line}: field 'id': {record.id!r} is already the id of "
                                f"line {earlier.line}")
            self.by_id[record.id] = record
        if record.prompt is not None:
            self.by_prompt.setdefault(record.prompt, []).append(record)

    def find(self, question_id: Any, prompt: str, taken: Collection[int] = ()) -> Match | None:
        """The record that answers the question ``question_id`` asked as ``prompt``, if any.

        ``taken``: the indexes of the records an earlier split's questions matched by id. Ids are unique within a
        split only (a dev question and a test question may both be 0), so a record matched by
        id answers one question; the other falls back to its prompt text (``auto``).
        """
        if self.match in ("auto", "id"):
            record = self.by_id.get(str(question_id))
            if record is not None and record.index not in taken:
                return Match(record, "id")
            if self.match == "id":
                return None
        found = self.by_prompt.get(prompt)
        if not found:
            return None
        if len(found) > 1:
            lines = " and ".join(str(r.line) for r in found[:2])
            raise ClueError(f"{self.path}: lines {lines} hold the same prompt (that of question {question_id!r}): "
                            f"keep one, or give the records ids and match by id (--set answer_match=id)")
        return Match(found[0], "prompt")

    def identity(self) -> dict[str, Any]:
        """Who answers: this file's content (a changed file never reuses earlier results), field and matching."""
        return {"source": "answers", "path": str(self.path), "sha256": self.sha256, "field": self.answer_field,
                "match": self.match}

    def stats(self) -> dict[str, int]:
        """What the file holds: records, and those of them with no answer."""
        return {"records": len(self.records),
                "records_without_answer": sum(1 for r in self.records if r.answers is None)}


def _items(path: Path, text: str) -> Iterator[tuple[int, Any]]:
    """``(line, value)`` for each record: the items of a JSON array, or the non-blank lines of JSON Lines."""
    start = len(text) - len(text.lstrip())
    if text[start:start + 1] == "[":
        yield from _array_items(path, text, start + 1)
        return
    # lines end where iter_jsonl's do (\n, \r\n, a lone \r): splitlines also cut at U+2028, U+2029 and
    # U+0085, which JSON strings may hold raw (json.dumps(ensure_ascii=False), clue-core's own files)
    for number, line in enumerate(text.replace("\r\n", "\n").replace("\r", "\n").split("\n"), 1):
        if not line.strip():
            continue
        try:
            yield number, json.loads(line)
        except json.JSONDecodeError as exc:
            raise ClueError(f"{path} line {number}: not JSON ({exc.msg}, column {exc.colno})") from None
        except RecursionError:
            raise ClueError(f"{path} line {number}: nested too deep") from None


def _array_items(path: Path, text: str, position: int) -> Iterator[tuple[int, Any]]:
    """The items of a JSON array, each with the line it starts on (so errors can name it)."""
    decoder = json.JSONDecoder()
    expect_item, count = True, 0
    line, counted = 1, 0  # newlines counted up to ``counted`` only: counting from 0 per record is quadratic
    while True:
        position = _skip_space(text, position)
        line, counted = line + text.count("\n", counted, position), position
        if position >= len(text):
            raise ClueError(f"{path} line {line}: the JSON array is not closed")
        char = text[position]
        if char == "]" and (not expect_item or count == 0):
            if _skip_space(text, position + 1) < len(text):
                raise ClueError(f"{path} line {line}: text after the JSON array")
            return
        if not expect_item:
            if char != ",":
                raise ClueError(f"{path} line {line}: not JSON (expected ',' or ']' between array items)")
            position, expect_item = position + 1, True
            continue
        try:
            item, position = decoder.raw_decode(text, position)
        except json.JSONDecodeError as exc:
            raise ClueError(f"{path} line {exc.lineno}: not JSON ({exc.msg}, column {exc.colno})") from None
        except RecursionError:
            raise ClueError(f"{path} line {line}: nested too deep") from None
        yield line, item
        expect_item, count = False, count + 1


def _skip_space(text: str, position: int) -> int:
    while position < len(text) and text[position] in " \t\r\n":
        position += 1
    return position


def _record(path: Path, index: int, line: int, item: dict[str, Any], answer_field: str) -> Record:
    """One object as a :class:`Record`; a field of the wrong type, or not writable as UTF-8, is one line naming it."""

    def fail(name: str, why: str) -> ClueError:
        return ClueError(f"{path} line {line}: field {name!r}: {why}")

    def text(value: str, name: str) -> str:
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise fail(name, f"holds a lone surrogate (\\u{ord(value[exc.start]):04x}, character {exc.start + 1}), "
                             "which no UTF-8 file can hold: write the character itself, or both halves of "
                             "its \\u escape pair") from None
        return value

    raw_id = item.get("id")
    if raw_id is not None and (isinstance(raw_id, bool) or not isinstance(raw_id, (str, int))):
        raise fail("id", f"expected a string or an integer, got {_json_type(raw_id)}")
    if isinstance(raw_id, str):
        text(raw_id, "id")
    prompt = item.get("prompt")
    if prompt is not None and not isinstance(prompt, str):
        raise fail("prompt", f"expected text, got {_json_type(prompt)}")
    if prompt:
        text(prompt, "prompt")
    else:
        prompt = _first_message(item.get("messages"))
        if prompt:
            text(prompt, "messages")
    value = item.get(answer_field)
    answers: tuple[str, ...] | None
    if value is None:
        answers = None
    elif isinstance(value, str):
        answers = (text(value, answer_field),)
    elif isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        answers = tuple(text(v, answer_field) for v in value)
    else:
        got = f"a list of {_kinds(value)}" if isinstance(value, list) else _json_type(value)
        raise fail(answer_field, f"expected the answer's text or a non-empty list of texts (one per turn), got {got}")
    return Record(index, line, None if raw_id is None else str(raw_id), prompt or None, answers,
                  isinstance(value, list))


def _first_message(messages: Any) -> str | None:
    """``messages[0].content`` where it is text (SuperCLUE's records with an empty ``prompt``)."""
    if isinstance(messages, list) and messages and isinstance(messages[0], dict):
        content = messages[0].get("content")
        if isinstance(content, str) and content:
            return content
    return None


def _kinds(values: list[Any]) -> str:
    return ", ".join(dict.fromkeys(_json_type(v) for v in values)) or "nothing"


def _json_type(value: Any) -> str:
    """A value's JSON type as a message names it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"
