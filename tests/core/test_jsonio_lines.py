"""iter_jsonl's fast path accepts and rejects exactly what json.loads does, line by line."""

from __future__ import annotations

import json

import pytest

from clue_core.errors import InputError
from clue_core.jsonio import iter_jsonl

GOOD_LINES = [
    '{"a": 1}',
    '  {"a": "leading blanks"}',
    '{"a": "trailing blanks"}   \t',
    '{"a": "crlf"}\r',
    '{"a": "中文", "b": [1, 2, {"c": null}]}',
    '{"a": NaN, "b": Infinity}',
    '{"a": "\\u00e9\\ud83d\\ude00"}',
    "",
    "   \t",
    '{"last": "no newline"}',
]


def test_same_records_as_json_loads(tmp_path) -> None:
    path = tmp_path / "train.json"
    path.write_text("\ufeff" + "\n".join(GOOD_LINES), encoding="utf-8")
    expected = [(n, json.loads(line)) for n, line in enumerate(GOOD_LINES, start=1) if line.strip()]
    got = list(iter_jsonl(path))
    assert [n for n, _ in got] == [n for n, _ in expected] == [1, 2, 3, 4, 5, 6, 7, 10]
    assert repr(got) == repr(expected)  # repr: NaN != NaN


@pytest.mark.parametrize("bad", [
    '{"a": 1} {"b": 2}',  # two objects on one line
    '{"a": 1} x',
    '{"a": 1',
    "{'a': 1}",
    '"\ufeff{}"x',
    "\ufeff{}",  # a byte-order mark in the middle of a file
])
def test_same_errors_as_json_loads(tmp_path, bad: str) -> None:
    path = tmp_path / "dev.json"
    path.write_text('{"ok": 1}\n' + bad + "\n", encoding="utf-8")
    with pytest.raises(json.JSONDecodeError) as reference:
        json.loads(bad + "\n")  # the line as read, newline included
    with pytest.raises(InputError) as caught:
        list(iter_jsonl(path))
    assert caught.value.line == 2
    assert f"invalid JSON: {reference.value.msg} (column {reference.value.colno})" in str(caught.value)


@pytest.mark.parametrize(("line", "kind"), [("[1, 2]", "list"), ("3", "int"), ('"x"', "str"), ("null", "NoneType")])
def test_non_objects_are_refused(tmp_path, line: str, kind: str) -> None:
    path = tmp_path / "test.json"
    path.write_text(line + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=f"test.json:1: expected a JSON object, got {kind}"):
        list(iter_jsonl(path))
