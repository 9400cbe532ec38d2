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


# ------------------------------------------------------------------ bytes that are not UTF-8


def lines_with_bad_byte(count: int, bad_line: int, *, blank_every: int = 0) -> bytes:
    """``count`` JSON lines (blank ones every ``blank_every``), line ``bad_line`` holding a 0xff byte."""
    out = []
    for number in range(1, count + 1):
        if blank_every and number % blank_every == 0:
            out.append(b"")
        elif number == bad_line:
            out.append('{"sentence": "坏'.encode() + b"\xff" + b'"}')
        else:
            out.append(f'{{"sentence": "第{number}行的句子", "label": "{number % 2}"}}'.encode())
    return b"\n".join(out) + b"\n"


@pytest.mark.parametrize(
    ("count", "bad_line", "blank_every"),
    [(30, 1, 0), (30, 21, 0), (3000, 1500, 0), (3000, 1501, 7), (50, 50, 0)],
    ids=["line-1", "line-21", "line-1500", "line-1501-with-blank-lines", "last-line"],
)
def test_bad_utf8_is_reported_on_its_own_line(tmp_path, count: int, bad_line: int, blank_every: int) -> None:
    path = tmp_path / "train.json"
    path.write_bytes(lines_with_bad_byte(count, bad_line, blank_every=blank_every))
    seen = []
    with pytest.raises(InputError) as caught:
        for number, _ in iter_jsonl(path):
            seen.append(number)
    assert caught.value.line == bad_line
    # column 16: the byte after the 15 characters {"sentence": "坏
    assert str(caught.value) == f"{path}:{bad_line}: not UTF-8 text (invalid start byte at column 16)"
    assert max(seen, default=0) < bad_line


def test_bad_utf8_after_crlf_lines_and_a_bom(tmp_path) -> None:
    path = tmp_path / "dev.json"
    path.write_bytes(b"\xef\xbb\xbf" + b'{"a": 1}\r\n' * 40 + b"\r\n" + b'{"a": "\xe4\xb8"}\r\n')
    with pytest.raises(InputError, match=r"dev\.json:42: not UTF-8 text \(invalid continuation byte at column 8\)"):
        list(iter_jsonl(path))


def test_read_json_names_the_line_of_a_bad_byte(tmp_path) -> None:
    from clue_core.jsonio import read_json

    path = tmp_path / "test.json"
    path.write_bytes(b'{\n  "data": [\n    "ok",\n    "\xff"\n  ]\n}\n')
    with pytest.raises(InputError) as caught:
        read_json(path)
    assert str(caught.value) == f"{path}:4: not UTF-8 text (invalid start byte at column 6)"
