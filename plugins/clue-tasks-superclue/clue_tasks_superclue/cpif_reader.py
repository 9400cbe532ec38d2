"""Read SuperCLUE-CPIFOpen's prompt file (``superclue-all-jqzl.json``) for ``superclue-cpif``.

The official file is JSON Lines, one ``{"prompt": ..., "valid_code": ...}`` a line, where
``valid_code`` is Python source defining ``check_response(response)``. Every prompt becomes
one open question whose single turn is the prompt exactly as written (a model that answers
from recorded answers matches them by that text: the recorded-answers file has no ids),
and whose one constraint carries the checker source for the metric
(``{"type": "python_check", "check_code": ...}``); the source is only run by
:mod:`clue_tasks_superclue.sandbox`.

The reader is lenient where the official evaluator is, so it never refuses a real file:
unknown fields are ignored; a prompt whose ``valid_code`` is empty is skipped, as the
evaluator skips answers to it (noted in the split's notes); a prompt given twice keeps its
first place and its last code, as the evaluator's ``{prompt: code}`` dict does. What the
evaluator could not read at all (a line that is not an object, a missing or non-text
prompt, code that is not text) is one :class:`InputError` naming the line.

Ids are the 0-based line index: stable for a given file, and unique where prompt hashes
would not be if a prompt were repeated.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from clue_core.plugin import DataError, InputError, SplitData, TaskSpec, find_file, iter_jsonl
from clue_tasks_superclue.examples import OpenQuestionExample
from clue_tasks_superclue.sandbox import planned_isolation

FILE_NAME = "superclue-all-jqzl.json"
DIMENSION = "精确指令遵循"
CATEGORY = "Hard"
CHECK_TYPE = "python_check"


def prompt_file(data_dir: Path) -> Path:
    found = find_file(Path(data_dir), FILE_NAME, required=False)
    if found is None:
        raise DataError(f"{data_dir}: no {FILE_NAME} (SuperCLUE-CPIFOpen's prompts and checkers, "
                        "see docs/superclue.md)")
    return found


def checker_of(example: OpenQuestionExample) -> str | None:
    """The checker source an example carries (None for an example of another task)."""
    for constraint in example.constraints:
        if constraint.get("type") == CHECK_TYPE and isinstance(constraint.get("check_code"), str):
            return str(constraint["check_code"])
    return None


def read(task: TaskSpec, data_dir: Path, split: str, settings: Mapping[str, Any] | None = None) -> SplitData:
    """``superclue-cpif``'s one split, ``dev``: every prompt that has checker code, in file order.

    With the run's ``sandbox`` setting, a note says which isolation the checkers will run in: the
    manifest records it (metrics.json records the one that held, ``sandbox_bwrap``)."""
    if split != "dev":
        raise DataError(f"superclue-cpif has one split, dev (not {split!r})")
    path = prompt_file(data_dir)
    first: dict[str, tuple[int, int]] = {}  # prompt -> (line, id) of its first occurrence
    code: dict[str, str] = {}
    skipped, repeated = 0, 0
    for line, record in iter_jsonl(path):
        prompt = _text(record, "prompt", path, line)
        checker = _text(record, "valid_code", path, line, required=False)
        if prompt in first:
            repeated += 1
        else:
            first[prompt] = (line, line - 1)
        code[prompt] = checker  # the evaluator's dict: the last code of a prompt wins
    examples, where = [], []
    for prompt, (line, index) in first.items():
        if not code[prompt]:
            skipped += 1  # the evaluator skips answers to a prompt without code
            continue
        examples.append(OpenQuestionExample(
            id=index, dimension=DIMENSION, category=CATEGORY, turns=(prompt,),
            constraints=({"type": CHECK_TYPE, "check_code": code[prompt]},)))
        where.append(f"{path}:{line}")
    if not examples:
        raise InputError(path, "contains no prompt with checker code (valid_code)")
    notes = []
    if skipped:
        notes.append(f"{skipped} prompt(s) without valid_code skipped, as the official evaluator skips them")
    if repeated:
        notes.append(f"{repeated} repeated prompt(s): each kept once, with its last valid_code")
    if settings is not None:
        notes.append(planned_isolation(str(settings.get("sandbox", "auto"))))
    return SplitData(tuple(examples), notes=tuple(notes), files=(str(path),), where=tuple(where))


def _text(record: dict[str, Any], name: str, path: Path, line: int, *, required: bool = True) -> str:
    value = record.get(name)
    if value is None and not required:
        return ""
    if not isinstance(value, str):
        message = "missing" if value is None else f"expected text, got {type(value).__name__}"
        raise InputError(path, message, line=line, field=name)
    if required and not value.strip():
        raise InputError(path, "empty", line=line, field=name)
    return value
