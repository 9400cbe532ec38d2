"""The parts of a task spec that live beside their feature (issue 30): the LLM prompt and its variants
(``clue_core.prompt_variants``), the task's leaderboard data (``clue_core.leaderboards``).

They print as they did inside ``clue_core.specs`` (``as_dict``, as in ``info --json``), and their modules
stay leaves: the task spec imports them, so one importing anything of clue-core would be a circle.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from clue_core.kernel import Kernel

KERNEL = Path(__file__).resolve().parents[2] / "clue_core"


def test_each_part_prints_as_the_task_spec_prints_it() -> None:
    kernel = Kernel(strict=False)
    prompted = [task for task in kernel.tasks.values() if task.prompt is not None and task.prompt.variants]
    if not prompted:
        pytest.skip("no installed task has prompt variants")
    for task in kernel.tasks.values():
        printed = task.as_dict()
        assert [lb.as_dict() for lb in task.leaderboards] == printed["leaderboards"]
        assert [tv.as_dict() for tv in task.test_versions] == printed["test_versions"]
        assert [score.as_dict() for score in task.published] == printed["published"]
        if task.prompt is not None:
            assert task.prompt.as_dict() == printed["prompt"]
            assert isinstance(printed["prompt"]["variants"], list)  # a JSON list, as every tuple field prints
    assert any(task.published for task in kernel.tasks.values()) and any(t.leaderboards for t in kernel.tasks.values())


@pytest.mark.parametrize("module", ["leaderboards", "prompt_variants"])
def test_the_parts_modules_import_nothing_of_clue_core(module: str) -> None:
    tree = ast.parse((KERNEL / f"{module}.py").read_text(encoding="utf-8"))
    imported = [node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
    imported += [alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names]
    assert not [name for name in imported if name and name.split(".")[0] == "clue_core"]
