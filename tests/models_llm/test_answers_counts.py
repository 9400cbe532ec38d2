"""``answers:<file>``'s counts and warnings: records told apart by position (a one-line JSON array put every
record on line 1: "444 of 445 records answer no question" when 431 had answered one), the split each
missing-answer warning is about, a lone surrogate refused when the file is read (it failed later, naming
the staging predictions), and a file name holding a terminal escape shown escaped."""

from __future__ import annotations

import json

import pytest

from clue_core.plugin import ClueError
from clue_models_llm.recorded_file import RecordedAnswers
from tests.models_llm.test_answers_model import WORDS, afqmc_dev, metrics, predictions, run_dir, write_jsonl


def _records() -> list[dict[str, object]]:
    answered = [{"id": i, "answer": WORDS[r["label"]]} for i, r in enumerate(afqmc_dev())]
    return [*answered, {"id": "elsewhere", "answer": "相同"}, {"id": 99, "answer": None}]


@pytest.mark.parametrize("layout", ["one-line array", "indented array", "json lines"])
def test_unmatched_records_are_counted_by_record_whatever_the_layout(run_cli, tmp_path, layout: str) -> None:
    records = _records()
    if layout == "json lines":
        file = write_jsonl(tmp_path / "a.jsonl", records)
    else:
        file = tmp_path / "a.json"
        file.write_text(json.dumps(records, ensure_ascii=False, indent=None if layout == "one-line array" else 2),
                        encoding="utf-8")
    result = run_dir(run_cli, tmp_path / "out", "afqmc", file)
    assert result.exit_code == 0, result.output
    assert f"warning: 2 of the 18 records in {file} answer no question asked" in result.output
    recorded = metrics(tmp_path / "out", "afqmc")["model_info"]["recorded"]
    assert (recorded["records"], recorded["matched_by_id"], recorded["unmatched_records"]) == (18, 16, 2)
    assert [p["raw"]["recorded"]["record"] for p in predictions(tmp_path / "out", "afqmc")] == list(range(1, 17))


def test_a_record_matched_by_id_in_dev_leaves_the_records_on_its_line_to_the_test_split(tmp_path) -> None:
    file = tmp_path / "a.json"
    file.write_text(json.dumps([{"id": 0, "answer": "甲"}, {"id": 1, "prompt": "问", "answer": "乙"}]),
                    encoding="utf-8")
    book = RecordedAnswers.read(file, "answer", "auto")
    dev = book.find(0, "x")
    assert dev is not None and (dev.record.line, dev.record.index) == (1, 1)
    # a test question with id 1: the record on the same line as the one dev took by id is still free
    test = book.find(1, "y", taken={dev.record.index})
    assert test is not None and test.record.answers == ("乙",) and test.by == "id"


def test_the_missing_answer_warnings_name_their_split(run_cli, tmp_path) -> None:
    file = write_jsonl(tmp_path / "a.jsonl", _records()[4:])
    result = run_dir(run_cli, tmp_path / "out", "afqmc", file)
    assert result.exit_code == 0, result.output
    assert "warning: 4 of 16 questions of the dev split have no recorded answer" in result.output
    assert "warning: 16 of 16 questions of the test 1.1 split have no recorded answer" in result.output


@pytest.mark.parametrize(("record", "field"), [
    ('{"id": 0, "answer": "好\\ud800"}', "answer"),
    ('{"id": 0, "answer": ["一", "\\udfff"]}', "answer"),
    ('{"id": "\\ud800", "answer": "a"}', "id"),
    ('{"prompt": "问\\ud800", "answer": "a"}', "prompt"),
    ('{"prompt": "", "messages": [{"content": "\\ud800"}], "answer": "a"}', "messages"),
])
def test_a_lone_surrogate_is_refused_when_the_file_is_read(run_cli, tmp_path, record: str, field: str) -> None:
    file = tmp_path / "a.jsonl"
    file.write_text('{"id": 5, "answer": "相同"}\n' + record + "\n", encoding="utf-8")
    with pytest.raises(ClueError) as caught:
        RecordedAnswers.read(file, "answer", "auto")
    assert str(caught.value).startswith(f"{file} line 2: field {field!r}: holds a lone surrogate (\\u")
    result = run_dir(run_cli, tmp_path / "out", "afqmc", file)
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert f"error: {file} line 2: field {field!r}: holds a lone surrogate" in result.output
    assert not (tmp_path / "out" / "afqmc").exists()


def test_a_lone_surrogate_in_a_json_array_names_its_line(tmp_path) -> None:
    file = tmp_path / "a.json"
    file.write_text('[\n  {"id": 1, "answer": "a"},\n  {"id": 2, "answer": "\\ud83d"}\n]', encoding="utf-8")
    with pytest.raises(ClueError, match=r"a\.json line 3: field 'answer': holds a lone surrogate \(\\ud83d, char"):
        RecordedAnswers.read(file, "answer", "auto")


def test_a_terminal_escape_in_the_file_name_is_shown_escaped(run_cli, tmp_path) -> None:
    file = write_jsonl(tmp_path / "a\x1b]0;pwned\x07.jsonl", _records()[4:])
    result = run_dir(run_cli, tmp_path / "out\x1b[2J", "afqmc", file)  # ESC [ 2 J clears the screen
    assert result.exit_code == 0, result.output
    warnings = [line for line in result.stderr.splitlines() if "warning:" in line]
    assert len(warnings) == 3 and not any("\x1b" in line or "\x07" in line for line in warnings)
    assert "\x1b" not in result.stdout and "\x07" not in result.stdout  # the results table
    assert "\x1b" not in result.stderr and "\x07" not in result.stderr  # every line the run echoes
    assert f"running with model answers:{tmp_path}/a\\x1b]0;pwned\\x07.jsonl" in result.stderr
    shown = "a\\x1b]0;pwned\\x07.jsonl"
    assert f"have no recorded answer in {tmp_path}/{shown}" in warnings[0]
    assert f"records in {tmp_path}/{shown} answer no question" in warnings[2]
    assert f"{tmp_path}/out\\x1b[2J/afqmc" in result.stdout  # the results table's run dir column
