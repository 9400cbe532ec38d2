"""``OpenQuestionExample``'s fields are the open-question kind's contract, not SuperCLUE's (issue 19).

The fields keep their names (run records, golden outputs and plugins read them); the class
says what each means for any open-question task, and the kernel holds to what it says: it
checks only the turns (through the kind's spec) and passes the grouping fields through
untouched. Since issue 30 the kind is the SuperCLUE plugin's (``clue_kinds``): the kernel's
public API holds neither the class nor the kind's name.
"""

from __future__ import annotations

import dataclasses

import pytest

import clue_core.plugin
from clue_core.errors import InputError
from clue_core.examples import SplitData, gold_of
from clue_core.kernel import Kernel
from clue_core.reading import check_examples
from clue_core.specs import TaskSpec
from clue_tasks_superclue import hooks
from clue_tasks_superclue.examples import OpenQuestionExample
from clue_tasks_superclue.hooks import OPEN_QUESTION

TASK = TaskSpec("open", OPEN_QUESTION, "any open questions", "m:r", metrics=(), splits=("dev",))


def test_the_docstring_documents_every_field_for_any_open_question_task():
    doc = " ".join((OpenQuestionExample.__doc__ or "").split())
    for field in dataclasses.fields(OpenQuestionExample):
        if field.name != "id":
            assert f"``{field.name}``" in doc, field.name
    assert "the open-question kind's contract for any task" in doc
    assert "SuperCLUE fills them" in doc  # SuperCLUE's names are one use, not the definition
    assert "The kernel does nothing with them" in doc
    assert "The field names are fixed" in doc


def test_the_field_names_stay_as_records_and_plugins_read_them():
    assert [f.name for f in dataclasses.fields(OpenQuestionExample)] == [
        "id", "dimension", "category", "turns", "reference", "rubric", "constraints", "tools", "expected_call"]


def test_the_kernel_passes_any_grouping_through_and_checks_only_the_turns():
    ungrouped = OpenQuestionExample("q1", "", "", ("写一首诗",))
    grouped = OpenQuestionExample("q2", "poetry", "writing", ("write a poem",), reference="…")
    check_examples(TASK, SplitData((ungrouped, grouped)))
    assert gold_of(grouped) == "…" and gold_of(ungrouped) is None
    assert set(hooks.OPEN_QUESTION_KIND.prompt_fields) == {"dimension", "category"}
    with pytest.raises(InputError, match="needs at least one non-empty turn"):
        check_examples(TASK, SplitData((OpenQuestionExample("q3", "poetry", "writing", ("  ",)),)))


def test_the_kind_is_the_plugins_and_the_kernel_names_none_of_it(isolated_kernel: Kernel):
    assert not hasattr(clue_core.plugin, "OpenQuestionExample") and not hasattr(clue_core.plugin, "OPEN_QUESTION")
    assert OPEN_QUESTION not in isolated_kernel.kinds  # the built-in plugin brings three kinds, not this one
    isolated_kernel.register(hooks, "clue-tasks-superclue")
    kind = isolated_kernel.kind(OPEN_QUESTION)
    assert isolated_kernel.owner[("kinds", OPEN_QUESTION)] == "clue-tasks-superclue"
    assert kind.open and kind.gold == "reference" and kind.example.endswith("examples:OpenQuestionExample")
