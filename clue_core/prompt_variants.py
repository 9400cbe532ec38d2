"""How a large language model is asked a task (:class:`Prompt`), its rewordings and their checks.

A task's spec carries its :class:`Prompt` (``TaskSpec.prompt``); the models that prompt read it and
the kernel checks it with the task. A prompt may carry ``variants`` (:class:`PromptVariant`):
the same protocol in other words (the instruction, the template's labels, the answer words, the
answer prefix). A model that asks them (the LLM models' ``--set prompt_variants=all``) shows how far a
score moves under a rewording alone, so a difference between two models can be read against it.
``default`` always names the prompt itself. The kernel checks each variant as it checks the prompt
(the same template fields, verbalizers for every label, distinct words), so a broken one fails on its
plugin's row in ``clue-core list``, not in a run.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

DEFAULT = "default"
#: A variant's name: what ``prompt_variants=<name,name>`` lists and a metric's total is named after.
NAME = re.compile(r"[a-z][a-z0-9_]{0,31}")
_FIELDS = ("instruction", "template", "verbalizers", "answer_prefix")


@dataclass(frozen=True, slots=True)
class PromptVariant:
    """A rewording of a task's :class:`Prompt` (its fields left ``None`` keep the prompt's): ``prompt_variants``."""
    name: str
    instruction: str | None = None
    template: str | None = None
    verbalizers: Mapping[str, str] | None = None
    answer_prefix: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """The variant as plain data, as every spec has it (``--json`` output)."""
        return _plain_fields(self)


@dataclass(frozen=True, slots=True)
class Prompt:
    """How a large language model is asked a task, owned by the task, rendered by the model.

    ``template`` is a ``str.format`` template over the example's fields (``{text}``,
    ``{text_pair}`` for classification; ``{context}``, ``{question}`` for span and
    multiple choice; ``{choices}`` is filled by the model with lettered options).
    ``verbalizers`` map each label string to the words an LLM answers with (a label
    ``"1"`` → ``"相同"``); ``answer_prefix`` ends the prompt before the answer.
    A kind a model knows no answer shape of (a plugin's: NER, KBQA) is answered by generation
    through three ``"module:attr"`` functions of the task's: ``parse(answer, example) -> (value,
    problem)`` reads the model's text into the prediction value (``problem``: why a malformed
    answer is one, its ``value`` then what it is scored as; counted, never an error);
    ``render(example) -> str`` writes the question where the template cannot (it then fills
    the template's place); ``answer(example) -> str`` the gold as the model should write it
    (few-shot demos); ``variants`` reword it (the LLMs' ``prompt_variants``). See docs/models-llm.md.
    """

    instruction: str
    template: str
    verbalizers: Mapping[str, str] = field(default_factory=dict)
    answer_prefix: str = "答案："
    parse: str | None = None  # each a "module:attr" (clue_core.specs.Ref), imported when a model answers
    render: str | None = None
    answer: str | None = None
    variants: tuple[PromptVariant, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        """The prompt as plain data, as every spec has it (``--json`` output; variants as a list)."""
        return {**_plain_fields(self), "variants": [variant.as_dict() for variant in self.variants]}


def _plain_fields(part: PromptVariant | Prompt) -> dict[str, Any]:
    """``part``'s fields, a mapping (a plugin's ``MappingProxyType`` too) as a dict: what the task spec's
    ``as_dict`` prints. Not ``dataclasses.asdict``, which deep-copies and cannot copy a mapping proxy."""
    return {f.name: dict(value) if isinstance(value := getattr(part, f.name), Mapping) else value
            for f in dataclasses.fields(part)}


class _Prompted(Protocol):
    """A task spec as its prompt's checks read it (:class:`clue_core.specs.TaskSpec`, which holds a
    :class:`Prompt`: this module cannot name it without an import circle)."""

    @property
    def prompt(self) -> Prompt | None: ...


Task = TypeVar("Task", bound=_Prompted)


def variant_names(prompt: Prompt | None) -> tuple[str, ...]:
    """``default`` and the names of the prompt's variants, in declared order."""
    return (DEFAULT, *(v.name for v in (prompt.variants if prompt is not None else ())))


def prompt_variant(prompt: Prompt, name: str) -> Prompt:
    """The prompt as variant ``name`` words it, without variants of its own; ``default``: the prompt.

    ``KeyError`` for a name the prompt does not have (callers say which names it has).
    """
    if name == DEFAULT:
        return prompt
    for variant in prompt.variants:
        if variant.name == name:
            changed = {f: value for f in _FIELDS if (value := getattr(variant, f)) is not None}
            return dataclasses.replace(prompt, variants=(), **changed)
    raise KeyError(name)


def prompt_problems(task: Task, fields: set[str], check: Callable[[Task, set[str]], list[str]]) -> list[str]:
    """What is wrong with the task's prompt (``check(task, fields)``: the kernel's checks of a prompt, ``fields``
    those its kind's examples have) and with its variants: their names, types, and the prompt as each words it."""
    problems = check(task, fields)
    prompt = task.prompt
    variants = prompt.variants if prompt is not None else ()
    if not isinstance(variants, tuple) or not all(isinstance(v, PromptVariant) for v in variants):
        return [*problems, "prompt variants must be a tuple of PromptVariant"]
    names = [v.name for v in variants]
    for name in names:
        if not isinstance(name, str) or not NAME.fullmatch(name) or name == DEFAULT:
            problems.append(f"prompt variant name {name!r} must be lower-case letters, digits and _ "
                            f"(at most 32, not {DEFAULT!r})")
    if len(set(names)) != len(names):
        problems.append("prompt variant names must be unique")
    for variant in variants:
        if all(getattr(variant, f) is None for f in _FIELDS):
            problems.append(f"prompt variant {variant.name}: changes nothing of the prompt")
            continue
        worded = dataclasses.replace(task, prompt=prompt_variant(prompt, variant.name))  # type: ignore[arg-type]
        problems += [f"prompt variant {variant.name}: {problem}" for problem in check(worded, fields)]
    return problems
