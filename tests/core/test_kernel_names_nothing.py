"""The kernel names no task, no benchmark's field and no SuperCLUE dimension (issue 30's goal).

A task name, a field only one benchmark's examples carry or one of SuperCLUE's dimensions in
``clue_core/`` means a feature crept back into the kernel. The words are taken from what the installed
plugins register, not typed here, so a new task plugin extends the check by being installed.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from clue_core.kernel import Kernel

KERNEL = Path(__file__).resolve().parents[2] / "clue_core"


def _benchmark_words() -> set[str]:
    kernel = Kernel(strict=False, disabled=())
    words = {name.lower() for name in kernel.tasks}
    # fields many kinds' examples carry, and plain words
    shared = {"id", "text", "label", "reference", "turns", "category", "tools", "question", "context", "candidates",
              "choices", "answers", "title", "group", "text_pair", "answer", "entities"}
    from clue_core.kinds import _DECLARED  # the kinds this kernel declared (its plugins' own)
    from clue_core.specs import resolve

    for spec in _DECLARED.values():
        example = resolve(spec.example)
        if dataclasses.is_dataclass(example) and spec.name not in {"classification", "span", "multiple_choice"}:
            words |= {f.name.lower() for f in dataclasses.fields(example)} - shared
    try:
        from clue_tasks_superclue.dimensions import DIMENSION_EN, DIMENSIONS
    except ImportError:
        pytest.skip("clue-tasks-superclue is not installed")
    words |= set(DIMENSIONS) | {name.lower() for name in DIMENSION_EN.values() if " " in name}  # not "code"
    return words


def test_the_kernel_names_no_task_no_benchmark_field_and_no_dimension() -> None:
    words = _benchmark_words()
    assert {"afqmc", "cmrc2018", "rubric", "expected_call", "计算"} <= words  # the plugins were read
    pattern = re.compile(r"(?<![\w-])(" + "|".join(sorted(map(re.escape, words), key=len, reverse=True))
                         + r")(?![\w-])", re.IGNORECASE)
    found = [f"{path.name}:{number}: {match.group(0)!r} in {line.strip()[:90]}"
             for path in sorted(KERNEL.glob("*.py"))
             for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             for match in pattern.finditer(line)]
    assert not found, "\n".join(found)
