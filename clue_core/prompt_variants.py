"""A task's prompt variants: rewordings of its own LLM prompt, picked by name, checked with the task.

A :class:`~clue_core.specs.Prompt` may carry ``variants`` (:class:`~clue_core.specs.PromptVariant`):
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
from collections.abc import Callable

from clue_core.specs import Prompt, PromptVariant, TaskSpec

DEFAULT = "default"
#: A variant's name: what ``prompt_variants=<name,name>`` lists and a metric's total is named after.
NAME = re.compile(r"[a-z][a-z0-9_]{0,31}")
_FIELDS = ("instruction", "template", "verbalizers", "answer_prefix")


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


def prompt_problems(task: TaskSpec, fields: set[str], check: Callable[[TaskSpec, set[str]], list[str]]) -> list[str]:
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
