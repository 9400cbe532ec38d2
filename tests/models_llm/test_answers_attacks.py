"""A hostile answers file (``answers:<file>``): big, odd or broken files fail fast, in one line, or work.

The first case failed before its fix: a JSON array's records were numbered by counting the
newlines from the start of the file for every record, so a 100k-record array took minutes.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from clue_core.plugin import ClueError
from clue_models_llm.recorded_file import RecordedAnswers


def _read(path: Path, field: str = "answer") -> RecordedAnswers:
    return RecordedAnswers.read(path, field, "auto")


def test_a_100k_record_json_array_reads_in_seconds(tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    records = [{"id": i, "prompt": f"question {i}", "answer": "x" * 100} for i in range(100_000)]
    path.write_text("[\n" + ",\n".join(json.dumps(r) for r in records) + "\n]\n", encoding="utf-8")
    start = time.monotonic()
    book = _read(path)
    assert time.monotonic() - start < 20
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
