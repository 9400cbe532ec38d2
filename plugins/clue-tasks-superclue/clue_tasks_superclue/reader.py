"""Read a SuperCLUE-style question file (``dev.jsonl``) strictly, for both tasks.

One JSON object per line (the format is documented in docs/superclue.md). Anything
malformed ends in one :class:`InputError` naming the file, the line and the field: unknown
fields (a typo would silently drop a constraint), wrong types, empty turns, a category that
contradicts SuperCLUE's for one of its dimensions, unknown constraint types (with the list
of known ones), an expected call of a tool the question does not offer, a closed form
whose answer index is out of range, duplicate ids.

``superclue`` reads every question as an :class:`OpenQuestionExample`; ``superclue-close``
reads the questions that carry a closed form as :class:`MultipleChoiceExample`, whose id is
``"<dimension>/<id>"``: the dimension then travels with the prediction records and the
submission-free ``evaluate`` path, so accuracy per dimension needs nothing but the
examples (no side table that a second process would not have). Dimensions may not
contain ``/`` for that reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clue_core.plugin import (
    DataError,
    InputError,
    MultipleChoiceExample,
    SplitData,
    TaskSpec,
    find_file,
    iter_jsonl,
)
from clue_tasks_superclue import constraints as rules
from clue_tasks_superclue.dimensions import DIMENSIONS
from clue_tasks_superclue.examples import OpenQuestionExample

FILE_NAME = "{split}.jsonl"
FIELDS = ("id", "dimension", "category", "turns", "reference", "rubric", "constraints", "tools", "expected_call",
          "close")
CLOSE_FIELDS = ("choices", "answer", "question")
#: Separates the dimension from the question id in superclue-close ids.
CLOSE_ID_SEPARATOR = "/"


@dataclass(frozen=True, slots=True)
class Closed:
    """A question's closed form: its stem (the first turn unless given), choices and answer."""

    question: str
    choices: tuple[str, ...]
    answer: int


@dataclass(frozen=True, slots=True)
class Question:
    """One line of the file, checked: the open question and, if any, its closed form."""

    example: OpenQuestionExample
    close: Closed | None
    line: int


def question_file(data_dir: Path, split: str) -> Path:
    name = FILE_NAME.format(split=split)
    found = find_file(Path(data_dir), name, required=False)
    if found is None:
        raise DataError(f"{data_dir}: no {name} (a SuperCLUE question file, see docs/superclue.md)")
    return found


def read_questions(path: Path) -> list[Question]:
    """Every line of ``path`` as a checked :class:`Question`, in file order; at least one.

    An empty file is refused as the CLUE readers refuse one: a run of no questions would
    otherwise finish "complete" with nothing scored.
    """
    questions: list[Question] = []
    seen: dict[str, int] = {}
    for line, record in iter_jsonl(path):
        question = _question(record, path, line)
        key = str(question.example.id)
        if key in seen:
            raise InputError(path, f"duplicate id {question.example.id!r} (also on line {seen[key]})", line=line,
                             field="id")
        seen[key] = line
        questions.append(question)
    if not questions:
        raise InputError(path, "contains no questions (a SuperCLUE question file has one JSON object a line)")
    return questions


def read(task: TaskSpec, data_dir: Path, split: str) -> SplitData:
    """``superclue``: every question, open."""
    path = question_file(data_dir, split)
    questions = read_questions(path)
    return SplitData(tuple(q.example for q in questions), files=(str(path),),
                     where=tuple(f"{path}:{q.line}" for q in questions))


def read_close(task: TaskSpec, data_dir: Path, split: str) -> SplitData:
    """``superclue-close``: the questions with a closed form, as multiple choice; at least one.

    A file without closed forms is refused (as an empty file is): the run would have
    nothing to ask and would still finish "complete".
    """
    path = question_file(data_dir, split)
    questions = [q for q in read_questions(path) if q.close is not None]
    if not questions:
        raise InputError(path, "no question has a closed form ('close'), so superclue-close has nothing to ask",
                         field="close")
    examples = tuple(
        MultipleChoiceExample(id=close_id(q.example.dimension, q.example.id), context="", question=q.close.question,
                              choices=q.close.choices, label=q.close.answer)
        for q in questions if q.close is not None)
    return SplitData(examples, files=(str(path),), where=tuple(f"{path}:{q.line}" for q in questions))


def close_id(dimension: str, question_id: Any) -> str:
    return f"{dimension}{CLOSE_ID_SEPARATOR}{question_id}"


def dimension_of_close_id(example_id: Any) -> str:
    """The dimension a superclue-close id names (see the module docstring)."""
    dimension, sep, _ = str(example_id).partition(CLOSE_ID_SEPARATOR)
    return dimension if sep else ""


# -- one record ----------------------------------------------------------------------------


class _Record:
    """Field access with errors that name the file, the line and the field."""

    def __init__(self, record: dict[str, Any], path: Path, line: int) -> None:
        self.record, self.path, self.line = record, path, line

    def fail(self, field: str, message: str) -> InputError:
        return InputError(self.path, message, line=self.line, field=field)

    def text(self, name: str, *, required: bool = True, value: Any = None, field: str | None = None) -> str | None:
        if field is None:
            if name not in self.record or self.record[name] is None:
                if required:
                    raise self.fail(name, "missing")
                return None
            value = self.record[name]
        where = field or name
        if not isinstance(value, str):
            raise self.fail(where, f"expected a string, got {type(value).__name__}")
        if not value.strip():
            raise self.fail(where, "empty")
        return value


def _question(record: dict[str, Any], path: Path, line: int) -> Question:
    r = _Record(record, path, line)
    for name in record:
        if name not in FIELDS:
            raise r.fail(name, f"unknown field (known: {', '.join(FIELDS)})")
    question_id = record.get("id")
    if question_id is None:
        raise r.fail("id", "missing")
    if isinstance(question_id, bool) or not isinstance(question_id, (str, int)) or question_id == "":
        raise r.fail("id", f"expected a non-empty string or an integer, got {question_id!r}")
    dimension = r.text("dimension")
    assert dimension is not None
    if CLOSE_ID_SEPARATOR in dimension:
        raise r.fail("dimension", f"must not contain {CLOSE_ID_SEPARATOR!r}")
    category = _category(r, dimension)
    turns = _turns(r)
    reference = r.text("reference", required=False)
    rubric = r.text("rubric", required=False)
    constraints = _constraints(r)
    tools = _tools(r)
    expected = _expected_call(r, tools)
    if constraints and expected is not None:
        raise r.fail("expected_call", "a question is checked either by its constraints or by its expected call, "
                                      "not both")
    example = OpenQuestionExample(id=question_id, dimension=dimension, category=category, turns=turns,
                                  reference=reference, rubric=rubric, constraints=constraints, tools=tools,
                                  expected_call=expected)
    return Question(example, _close(r, turns), line)


def _category(r: _Record, dimension: str) -> str:
    category = r.text("category", required=False)
    known = DIMENSIONS.get(dimension)
    if category is None:
        if known is None:
            raise r.fail("category", f"missing: {dimension!r} is not one of SuperCLUE's dimensions "
                                     f"({', '.join(DIMENSIONS)}), so its category must be given")
        return known
    if known is not None and category != known:
        raise r.fail("category", f"{dimension} belongs to {known} in SuperCLUE, not {category}")
    return category


def _turns(r: _Record) -> tuple[str, ...]:
    value = r.record.get("turns")
    if value is None:
        raise r.fail("turns", "missing")
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value:
        raise r.fail("turns", "expected a string or a non-empty list of strings")
    for index, turn in enumerate(value):
        r.text("turns", value=turn, field=f"turns[{index}]")
    return tuple(value)


def _constraints(r: _Record) -> tuple[dict[str, Any], ...]:
    value = r.record.get("constraints")
    if value is None:
        return ()
    if not isinstance(value, list) or not value:
        raise r.fail("constraints", "expected a non-empty list of objects")
    for index, constraint in enumerate(value):
        found = rules.problem(constraint)
        if found is not None:
            name, message = found
            raise r.fail(f"constraints[{index}]" + (f".{name}" if name else ""), message)
    return tuple(value)


def _tools(r: _Record) -> tuple[dict[str, Any], ...]:
    value = r.record.get("tools")
    if value is None:
        return ()
    if not isinstance(value, list) or not value:
        raise r.fail("tools", "expected a non-empty list of OpenAI tool definitions")
    names: set[str] = set()
    for index, tool in enumerate(value):
        where = f"tools[{index}]"
        if not isinstance(tool, dict) or tool.get("type") != "function":
            raise r.fail(where, 'expected {"type": "function", "function": {"name": ..., "parameters": ...}}')
        function = tool.get("function")
        if not isinstance(function, dict):
            raise r.fail(f"{where}.function", "expected an object")
        name = r.text("", value=function.get("name"), field=f"{where}.function.name")
        parameters = function.get("parameters", {})
        if not isinstance(parameters, dict):
            raise r.fail(f"{where}.function.parameters", "expected a JSON schema object")
        if name in names:
            raise r.fail(f"{where}.function.name", f"tool {name!r} defined twice")
        names.add(name)  # type: ignore[arg-type]
    return tuple(value)


def _expected_call(r: _Record, tools: tuple[dict[str, Any], ...]) -> dict[str, Any] | None:
    value = r.record.get("expected_call")
    if value is None:
        return None
    if not isinstance(value, dict):
        raise r.fail("expected_call", 'expected {"name": ..., "arguments": {...}}')
    for name in value:
        if name not in ("name", "arguments"):
            raise r.fail(f"expected_call.{name}", "unknown field (known: name, arguments)")
    name = r.text("", value=value.get("name"), field="expected_call.name")
    arguments = value.get("arguments", {})
    if not isinstance(arguments, dict):
        raise r.fail("expected_call.arguments", "expected an object")
    offered = [tool["function"]["name"] for tool in tools]
    if name not in offered:
        raise r.fail("expected_call.name", f"{name!r} is not one of the question's tools "
                                           f"({', '.join(offered) or 'it offers none'})")
    return {"name": name, "arguments": arguments}


def _close(r: _Record, turns: tuple[str, ...]) -> Closed | None:
    value = r.record.get("close")
    if value is None:
        return None
    if not isinstance(value, dict):
        raise r.fail("close", 'expected {"choices": [...], "answer": index}')
    for name in value:
        if name not in CLOSE_FIELDS:
            raise r.fail(f"close.{name}", f"unknown field (known: {', '.join(CLOSE_FIELDS)})")
    choices = value.get("choices")
    if not isinstance(choices, list) or len(choices) < 2:
        raise r.fail("close.choices", "expected a list of at least two choices")
    for index, choice in enumerate(choices):
        r.text("", value=choice, field=f"close.choices[{index}]")
    if len(set(choices)) != len(choices):
        raise r.fail("close.choices", "choices must differ")
    answer = value.get("answer")
    if isinstance(answer, bool) or not isinstance(answer, int):
        raise r.fail("close.answer", "missing" if answer is None else f"expected an integer index, got {answer!r}")
    if not 0 <= answer < len(choices):
        raise r.fail("close.answer", f"index {answer} out of range for {len(choices)} choices")
    stem = value.get("question")
    stem = turns[0] if stem is None else r.text("", value=stem, field="close.question")
    return Closed(str(stem), tuple(choices), answer)
