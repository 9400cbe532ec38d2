"""The open-question kind's example type and checks (its name and spec are in the hook module).

This kind is this plugin's, declared through ``clue_kinds`` (:mod:`clue_tasks_superclue.hooks`),
so the kernel holds none of its fields. Another plugin that asks open questions may read into
:class:`OpenQuestionExample` and name ``"open_question"`` as its task's kind where this plugin is
installed; a model plugin answers it by the kind's name and the fields it finds (``turns``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from clue_core.plugin import ExampleId, TaskSpec


@dataclass(frozen=True, slots=True)
class OpenQuestionExample:
    """An open question, answered in free text and scored by a judge or by code.

    This is the open-question kind's contract for any task, not only SuperCLUE's:

    - ``dimension`` is the ability a question tests and ``category`` the broader group that
      dimension belongs to: the task's two levels of grouping, fine then coarse. SuperCLUE
      fills them with its own dimension and category names (:mod:`clue_tasks_superclue.dimensions`);
      another task may use any labels, or ``""`` where it has no grouping. The kernel does nothing with
      them beyond letting a prompt template name them (``{dimension}``, ``{category}``):
      grouping scores by them is the business of the task's metric and report.
    - ``turns`` are the user's messages of a dialogue, answered one by one; the kind's check
      insists on at least one and that none is blank.
    - ``reference`` is an optional reference answer (the example's gold, ``gold_of``),
      ``rubric`` what a judge looks for; ``constraints`` are verifiable instructions checked
      by code (``{"type": "max_chars", "value": 50}``); ``tools`` are chat tool definitions
      offered to the model, with the call it should make in ``expected_call``. They pass
      through untouched: their meaning is between the task's metric and the model.

    The field names are fixed (run records, golden outputs and plugins read them); a task with
    other grouping needs puts them in these two fields rather than renaming them.
    """

    id: ExampleId
    dimension: str
    category: str
    turns: tuple[str, ...]
    reference: str | None = None
    rubric: str | None = None
    constraints: tuple[Mapping[str, Any], ...] = ()
    tools: tuple[Mapping[str, Any], ...] = ()
    expected_call: Mapping[str, Any] | None = None


def check_example(task: TaskSpec, example: OpenQuestionExample) -> tuple[str, str] | None:
    """At least one turn, and no blank one: a model cannot answer an empty message."""
    if not example.turns or not all(isinstance(t, str) and t.strip() for t in example.turns):
        return "turns", "needs at least one non-empty turn"
    return None


def check_prediction(task: TaskSpec, example: OpenQuestionExample, value: Any) -> str | None:
    """An answer is free text (None where the model gave none: judged as unanswered)."""
    return None if value is None or isinstance(value, str) else f"expected an answer text, got {type(value).__name__}"
