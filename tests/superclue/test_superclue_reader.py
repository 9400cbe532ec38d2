"""The question file reader: the bundled sample, both tasks' views of it, and every strictness case."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clue_core.errors import DataError, InputError
from clue_core.kernel import Kernel
from clue_core.plugin import MultipleChoiceExample
from clue_core.reading import read_split
from clue_tasks_superclue import hooks
from clue_tasks_superclue.dimensions import DIMENSIONS
from clue_tasks_superclue.examples import OpenQuestionExample
from clue_tasks_superclue.reader import dimension_of_close_id, read, read_close, read_questions

SAMPLE = Path(hooks.__file__).parent / "sample" / "dev.jsonl"
TOOL = {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}


def write(tmp_path: Path, *records: dict) -> Path:
    folder = tmp_path / "data"
    folder.mkdir(exist_ok=True)
    path = folder / "dev.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return folder


def good(**changes) -> dict:
    record = {"id": "q1", "dimension": "计算", "turns": "1+1等于几？"}
    record.update(changes)
    return {k: v for k, v in record.items() if v is not ...}


def test_the_sample_covers_every_dimension_with_rubrics() -> None:
    questions = read_questions(SAMPLE)
    examples = [q.example for q in questions]
    by_dimension = {d: [e for e in examples if e.dimension == d] for d in DIMENSIONS}
    assert all(len(found) >= 3 for found in by_dimension.values()), {d: len(f) for d, f in by_dimension.items()}
    assert len(examples) >= 36
    assert all(e.rubric for e in examples if not e.constraints)
    assert sum(len(e.turns) > 1 for e in examples) >= 5
    tools = by_dimension["工具使用"]
    assert all(e.tools and e.expected_call for e in tools)
    assert all(e.constraints for e in by_dimension["精确指令遵循"])
    closed = [q for q in questions if q.close is not None]
    assert len(closed) >= len(examples) // 2
    assert len({q.example.dimension for q in closed}) >= 9
    assert all(e.category == DIMENSIONS[e.dimension] for e in examples)


def test_both_tasks_read_the_sample_through_the_kernel() -> None:
    kernel = Kernel()
    folder = SAMPLE.parent
    open_part = read_split(kernel.task("superclue"), folder, "dev")
    close_part = read_split(kernel.task("superclue-close"), folder, "dev")
    assert all(isinstance(e, OpenQuestionExample) for e in open_part.examples)
    assert all(isinstance(e, MultipleChoiceExample) for e in close_part.examples)
    first = close_part.examples[0]
    assert first.id == "计算/calc-001" and dimension_of_close_id(first.id) == "计算"
    assert first.choices[first.label] == "172元"
    assert close_part.where[0].endswith("dev.jsonl:1")


def test_a_minimal_question_and_its_derived_fields(tmp_path) -> None:
    folder = write(tmp_path, good(), good(id=7, dimension="方言", category="文科", turns=["你好", "再见"]))
    part = read(hooks.SUPERCLUE, folder, "dev")
    first, second = part.examples
    assert first.category == "理科" and first.turns == ("1+1等于几？",) and first.reference is None
    assert second.id == 7 and second.turns == ("你好", "再见") and second.category == "文科"
    with pytest.raises(InputError, match="no question has a closed form"):  # superclue-close: nothing to ask
        read_close(hooks.CLOSE, folder, "dev")


CASES = [
    (good(id=...), "id", "missing"),
    (good(id=True), "id", "non-empty string or an integer"),
    (good(id=""), "id", "non-empty string or an integer"),
    (good(dimension=...), "dimension", "missing"),
    (good(dimension=3), "dimension", "expected a string"),
    (good(dimension="计算/难"), "dimension", "must not contain"),
    (good(dimension="方言"), "category", "category must be given"),
    (good(category="文科"), "category", "计算 belongs to 理科"),
    (good(turns=...), "turns", "missing"),
    (good(turns=[]), "turns", "non-empty list"),
    (good(turns=["好", " "]), "turns[1]", "empty"),
    (good(turns=["好", 3]), "turns[1]", "expected a string"),
    (good(reference=5), "reference", "expected a string"),
    (good(rubric=""), "rubric", "empty"),
    (good(constraint=[{"type": "json"}]), "constraint", "unknown field"),
    (good(constraints={"type": "json"}), "constraints", "non-empty list"),
    (good(constraints=[{"type": "max_words", "value": 3}]), "constraints[0].type", "known: max_chars, min_chars"),
    (good(constraints=[{"type": "json"}, {"type": "max_chars"}]), "constraints[1].value", "missing"),
    (good(tools=[{"type": "function"}]), "tools[0].function", "expected an object"),
    (good(tools=[{"name": "x"}]), "tools[0]", '"type": "function"'),
    (good(tools=[TOOL, TOOL]), "tools[1].function.name", "defined twice"),
    (good(tools=[TOOL], expected_call={"name": "get_time", "arguments": {}}), "expected_call.name",
     "not one of the question's tools"),
    (good(expected_call={"name": "get_weather"}), "expected_call.name", "it offers none"),
    (good(tools=[TOOL], expected_call={"name": "get_weather", "arguments": "北京"}), "expected_call.arguments",
     "expected an object"),
    (good(tools=[TOOL], expected_call={"name": "get_weather", "args": {}}), "expected_call.args", "unknown field"),
    (good(tools=[TOOL], expected_call={"name": "get_weather"}, constraints=[{"type": "json"}]), "expected_call",
     "not both"),
    (good(close={"choices": ["2"], "answer": 0}), "close.choices", "at least two"),
    (good(close={"choices": ["2", "3"], "answer": 2}), "close.answer", "out of range"),
    (good(close={"choices": ["2", "3"], "answer": "0"}), "close.answer", "integer index"),
    (good(close={"choices": ["2", "3"]}), "close.answer", "missing"),
    (good(close={"choices": ["2", "2"], "answer": 0}), "close.choices", "must differ"),
    (good(close={"choices": ["2", ""], "answer": 0}), "close.choices[1]", "empty"),
    (good(close={"choices": ["2", "3"], "answer": 0, "hint": "x"}), "close.hint", "unknown field"),
]


@pytest.mark.parametrize(("record", "field", "words"), CASES, ids=[f"{f}-{i}" for i, (_, f, _) in enumerate(CASES)])
def test_bad_records_name_file_line_and_field(tmp_path, record, field, words) -> None:
    folder = write(tmp_path, good(id="first"), record)
    with pytest.raises(InputError) as caught:
        read(hooks.SUPERCLUE, folder, "dev")
    error = caught.value
    assert error.path.endswith("dev.jsonl") and error.line == 2 and error.field == field
    assert words in error.reason
    assert str(error).startswith(f"{error.path}:2: field '{field}'")


def test_duplicate_ids_are_refused_with_both_lines(tmp_path) -> None:
    folder = write(tmp_path, good(id="a"), good(id="b"), good(id="a"))
    with pytest.raises(InputError, match=r"dev.jsonl:3: field 'id': duplicate id 'a' \(also on line 1\)"):
        read(hooks.SUPERCLUE, folder, "dev")


def test_broken_json_and_a_missing_file(tmp_path) -> None:
    folder = write(tmp_path, good())
    (folder / "dev.jsonl").write_text(json.dumps(good()) + "\n{broken\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"dev.jsonl:2: invalid JSON"):
        read(hooks.SUPERCLUE, folder, "dev")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(DataError, match=r"no dev\.jsonl"):
        read(hooks.SUPERCLUE, empty, "dev")


def test_the_cli_turns_a_bad_file_into_one_line(run_cli, tmp_path) -> None:
    folder = write(tmp_path, good(constraints=[{"type": "max_words", "value": 3}]))
    result = run_cli("run", "superclue", "--model", "llm-tiny", "--data-dir", folder, "-o", tmp_path / "out")
    assert result.exit_code == 2
    assert result.output.strip().count("\n") == 0 and "constraints[0].type" in result.output
