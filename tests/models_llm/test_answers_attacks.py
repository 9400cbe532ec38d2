"""A hostile answers file (``answers:<file>``): big, odd or broken files fail fast, in one line, or work.

The first case failed before its fix: a JSON array's records were numbered by counting the
newlines from the start of the file for every record, so a 100k-record array took minutes.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from clue_core.plugin import ClueError
from clue_models_llm.recorded_file import RecordedAnswers


def _read(path: Path, field: str = "answer") -> RecordedAnswers:
    return RecordedAnswers.read(path, field, "auto")


class _Counting(str):
    """A text that counts how many characters its ``count`` calls scan."""

    scanned = 0

    def count(self, sub: str, start: int | None = 0, end: int | None = None) -> int:  # type: ignore[override]
        stop = len(self) if end is None else end
        _Counting.scanned += max(0, stop - (start or 0))
        return str.count(self, sub, start, end)


def test_a_100k_record_json_array_is_scanned_once(tmp_path: Path) -> None:
    """Line numbers were counted from the file's start for every record: quadratic (minutes for 100k).
    Measured by the characters scanned, not by a clock."""
    from clue_models_llm.recorded_file import _array_items

    records = [{"id": i, "prompt": f"question {i}", "answer": "x" * 100} for i in range(100_000)]
    text = "[\n" + ",\n".join(json.dumps(r) for r in records) + "\n]\n"
    _Counting.scanned = 0
    lines = [line for line, _ in _array_items(tmp_path / "big.json", _Counting(text), 1)]
    assert lines[0] == 2 and lines[-1] == 100_001 and _Counting.scanned <= len(text)
    path = tmp_path / "big.json"
    path.write_text(text, encoding="utf-8")
    book = _read(path)
    assert len(book.records) == 100_000 and book.records[-1].line == 100_001 and book.records[0].line == 2
    assert book.find(99_999, "").record.answers == ("x" * 100,)


def test_line_numbers_in_an_array_still_name_the_record(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    path.write_text('[\n {"id": 1, "answer": "a"},\n\n {"id": 2,\n  "answer": 3}\n]', encoding="utf-8")
    with pytest.raises(ClueError, match=r"line 4: field 'answer'"):
        _read(path)


@pytest.mark.parametrize("text, message", [
    ('[{"id": 1, "answer": "a"}] trailing', r"line 1: text after the JSON array"),
    ('[{"id": 1, "answer": "a"},\n{"id": "1", "answer": "b"}]', r"line 2: field 'id': '1' is already the id of line 1"),
    ('{"id": 1, "answer": 5}\n', r"line 1: field 'answer': .* got number"),
    ('{"id": 1, "answer": "a\x00b"}\n', r"line 1: not JSON"),
])
def test_broken_files_fail_in_one_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "a.jsonl"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ClueError, match=message):
        _read(path)


def test_an_escaped_nul_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_text('{"id": 1, "answer": "a\\u0000b"}\n', encoding="utf-8")
    assert _read(path).find(1, "").record.answers == ("a\x00b",)


def test_a_directory_or_a_symlink_loop_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(ClueError, match="cannot read"):
        _read(tmp_path)
    loop = tmp_path / "loop.json"
    os.symlink(loop, loop)
    with pytest.raises(ClueError, match="cannot read"):
        _read(loop)


def test_duplicate_prompts_with_different_answers_are_refused_when_asked(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_text('{"prompt": "q", "answer": "a"}\n{"prompt": "q", "answer": "b"}\n', encoding="utf-8")
    book = _read(path)
    with pytest.raises(ClueError, match="lines 1 and 2 hold the same prompt"):
        book.find(7, "q")


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\x85"])
def test_a_line_separator_inside_a_json_string_is_text(tmp_path: Path, separator: str) -> None:
    """JSON strings hold U+2028, U+2029 and U+0085 raw (json.dumps with ensure_ascii=False writes them so, as
    clue-core's own files do): str.splitlines cut the line there, 'not JSON (Unterminated string ...)'."""
    path = tmp_path / "a.jsonl"
    records = [{"id": 0, "answer": f"相同{separator}x"}, {"id": 1, "answer": "不同"}]
    path.write_text("\r\n".join(json.dumps(r, ensure_ascii=False) for r in records) + "\n", encoding="utf-8")
    book = _read(path)
    assert [r.line for r in book.records] == [1, 2] and book.records[0].answers == (f"相同{separator}x",)
