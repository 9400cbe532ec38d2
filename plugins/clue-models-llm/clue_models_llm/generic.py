"""Kinds this plugin knows no answer shape of, answered by generation through the task's own functions.

The prompt belongs to the task, and so does the answer's shape. For the four kinds this plugin
knows (classification, span, multiple choice, open question) it reads answers itself; for any
other kind it runs (a plugin's: ``entity_spans``, ``kbqa_triple``) it never learns the example
type: the task's :class:`~clue_core.plugin.Prompt` names, as ``"module:attr"``,

* ``parse(answer, example) -> (value, problem)``: the model's answer text (after the think block,
  cut at the first stop string) read into the prediction's value. ``problem`` is ``None`` for a
  well-formed answer, else one line saying why it is malformed; ``value`` is then what the answer
  is scored as (no entities, three empty parts): a malformed answer is counted (``raw["malformed"]``,
  ``model_info["malformed"]``), never an error. ``parse("", example)`` is also the value of a
  question with no recorded answer (``answers:<file>``). A ``parse`` that raises is the task
  plugin's bug: one line naming it, the task and the example;
* ``render(example) -> str`` (optional): the question's text, in place of the ``template`` filled
  with the example's fields (what a field that is no text needs: a list of candidate triples);
* ``answer(example) -> str`` (optional): the example's gold as the model should write it, the
  few-shot demos' answers; without it ``shots`` above 0 is refused at planning.

Without ``render`` the template is filled with the fields it names (the kind's ``prompt_fields``,
checked when the plugin loads), each as ``str(value)``. A task of such a kind without ``parse`` is
refused when its learner is built, before any task runs, in one line (:func:`require`); the
answers are read into predictions by :func:`clue_models_llm.answers.parsed`. Nothing here names
a task or imports a task plugin.
"""

from __future__ import annotations

import string
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from clue_core.plugin import CLASSIFICATION, MULTIPLE_CHOICE, SPAN, ClueError, TaskSpec, resolve
from clue_models_llm.kinds import OPEN_QUESTION

#: The kinds whose answers this plugin reads itself; every other kind goes through the task's functions.
OWN_KINDS = frozenset({CLASSIFICATION, SPAN, MULTIPLE_CHOICE, OPEN_QUESTION})


def is_generic(kind: str) -> bool:
    """Whether ``kind``'s answers are read by the task's ``parse`` (any kind but this plugin's own four)."""
    return kind not in OWN_KINDS


def require(task: TaskSpec) -> None:
    """A task of a generic kind says how its answers are read (``Prompt.parse``), or one line refuses it."""
    if is_generic(task.kind) and task.prompt is not None and task.prompt.parse is None:
        raise ClueError(f"task {task.name}: a language model answers {task.kind} examples only by generation, "
                        f"and the task's prompt names no parse function to read the answer (Prompt.parse, see "
                        f"docs/models-llm.md)")


@dataclass(frozen=True, slots=True)
class TaskFunctions:
    """The task's ``parse``, ``render`` and ``answer``, resolved (``render``/``answer`` may be absent)."""

    task: str
    parse_ref: str
    parse: Callable[[str, Any], Any]
    render: Callable[[Any], str] | None
    answer: Callable[[Any], str] | None

    @classmethod
    def of(cls, task: TaskSpec) -> TaskFunctions:
        require(task)
        prompt = task.prompt
        assert prompt is not None and prompt.parse is not None

        def load(name: str) -> Any:
            ref = getattr(prompt, name)
            if ref is None:
                return None
            try:
                return resolve(ref)
            except (ImportError, AttributeError, ValueError) as exc:
                raise ClueError(f"task {task.name}: its prompt's {name} {ref!r} cannot be imported "
                                f"({type(exc).__name__}: {exc})") from None

        return cls(task.name, str(prompt.parse), load("parse"), load("render"), load("answer"))

    def read(self, answer: str, example: Any) -> tuple[Any, str | None]:
        """``(value, problem)`` of one answer; ``problem`` is why it is malformed, or None."""
        try:
            result = self.parse(answer, example)
        except Exception as exc:
            raise ClueError(f"task {self.task}: its parse {self.parse_ref} raised on example {example.id!r} "
                            f"({type(exc).__name__}: {exc}); a malformed answer is returned as (value, "
                            f"problem), not raised") from None
        if not (isinstance(result, tuple) and len(result) == 2 and (result[1] is None or isinstance(result[1], str))):
            raise ClueError(f"task {self.task}: its parse {self.parse_ref} must return (value, problem), got "
                            f"{type(result).__name__} for example {example.id!r}")
        return result[0], result[1]


def template_fields(template: str, example: Any) -> dict[str, str]:
    """The fields ``template`` names, read from the example by name, as text."""
    names = {name for _, name, _, _ in string.Formatter().parse(template) if name}
    return {name: str(getattr(example, name, "")) for name in names}
