"""Prompt spread: each labelled example asked again under the task's prompt variants (no torch here).

A score measured with one prompt says nothing of how much it owes to the wording. A task's
:class:`~clue_core.plugin.Prompt` may carry ``variants`` (:class:`~clue_core.plugin.PromptVariant`:
the same protocol in other words: instruction, field labels, answer words, answer prefix); the
``prompt_variants`` setting of the LLM models asks them:

* ``default`` (the default): only the task's prompt, as before;
* ``all``: every variant of the task's prompt besides it (a task without variants: one line says
  so, and only its prompt is asked);
* ``name,name``: those variants (an unknown name is one ``error:`` line listing the task's).

Only labelled dev examples are asked again (a test file's answers cannot be scored, the submission is
the default prompt's, and the spread is scored on dev: ``clue_builtin.prompt_spread``). The run's
predictions stay the default prompt's, so every file of the run and its primary metric are what they are
with ``prompt_variants=default``; each variant's answer (its value, and its choice scores where it has
some, for a decode step that reads them) is kept in ``raw["prompt_variants"]``. Each variant's question
is its own request, with its own prompt in its cache key: a rerun answers every variant from the cache,
and a run of the default prompt alone shares its answers. The built-in metric ``prompt_spread``
(:mod:`clue_builtin.prompt_spread`) scores each variant with the task's primary metric and their mean ±
std; the learner names it in its ``extra_metrics``. What a variant's requests cost (a server's tokens)
is added to the example's ``raw["usage"]``, so it is billed with the rest.

Not applied (one line says why): under a protocol preset (``protocol=opencompass:…``: another
framework's prompt, not the task's), to open questions (judged by a model: each variant would be
judged again), and to answers read from a record (``answers:<file>``: each question asked one way).
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from clue_core.plugin import ClueError, Example, Prediction, TaskSpec, prompt_variant, variant_names
from clue_models_llm.answers import gold
from clue_models_llm.kinds import OPEN_QUESTION
from clue_models_llm.prompts import Renderer, sha256

DEFAULT, ALL = "default", "all"
#: Where each prediction keeps its variants' answers.
RAW = "prompt_variants"
#: The metric the learner adds when variants are asked (clue_builtin.prompt_spread).
METRIC = "prompt_spread"

#: ``answer(name, renderer, examples) -> predictions``: the learner's own path, asked through variant ``name``'s
#: ``renderer``.
Answer = Callable[[str, Renderer, Sequence[Example]], list[Prediction]]


def chosen(task: TaskSpec, setting: Any) -> list[str]:
    """The variants ``setting`` asks of ``task`` besides its prompt, in the prompt's order; ClueError for a name
    the task's prompt does not have."""
    text = str(setting or DEFAULT).strip()
    names = variant_names(task.prompt)
    if text == DEFAULT:
        return []
    if text == ALL:
        return list(names[1:])
    asked = [name.strip() for name in text.split(",") if name.strip()]
    unknown = [name for name in asked if name not in names]
    if unknown or not asked:
        has = ", ".join(names[1:]) or "none"
        raise ClueError(f"setting 'prompt_variants': task {task.name} has no prompt variant "
                        f"{(unknown or [text])[0]!r} (its variants: {has}; or all, default)")
    return [name for name in names[1:] if name in asked]


class Spread:
    """One task's prompt variants as a learner asks them: which, why not, their renderers once fitted."""

    def __init__(self, task: TaskSpec, setting: Any, preset: bool = False) -> None:
        self.task, self.setting = task, str(setting or DEFAULT).strip()
        self.names = chosen(task, setting)  # at planning: an unknown name fails before any task runs
        self.note: str | None = None
        if self.setting != DEFAULT and not self.names:
            self.note = (f"prompt_variants={self.setting}: task {task.name}'s prompt has no variants; its prompt "
                         f"alone is asked")
        elif self.names and preset:
            self.note = (f"prompt_variants={self.setting}: not applied: a protocol preset asks task {task.name} in "
                         f"its own framework's words, not the task's")
        elif self.names and task.kind == OPEN_QUESTION:
            self.note = (f"prompt_variants={self.setting}: not applied: open questions are judged by a model, "
                         f"which would judge each variant's answers again")
        if self.note is not None:
            self.names = []
        self.renderers: dict[str, Renderer] = {}

    @property
    def metrics(self) -> tuple[str, ...]:
        """The metric the learner adds (none when no variant is asked)."""
        return (METRIC,) if self.names else ()

    def fit(self, make: Callable[[TaskSpec], Renderer], computed: bool = True) -> None:
        """A renderer per variant, built as the default's is (``make``: demos, chat) for the task so worded;
        none where the answers are read, not computed (``answers:<file>`` holds each question asked one way)."""
        if self.names and not computed:
            self.note = (f"prompt_variants={self.setting}: not applied: the answers are read from a record, which "
                         f"holds each question of task {self.task.name} asked one way")
            self.names = []
        prompt = self.task.prompt
        assert prompt is not None or not self.names
        self.renderers = {name: make(dataclasses.replace(self.task, prompt=prompt_variant(prompt, name)))
                          for name in self.names}

    def ask(self, examples: Sequence[Example], predictions: list[Prediction], answer: Answer,
            split: str = "") -> list[Prediction]:
        """``predictions`` (the default prompt's) with each labelled example's variants' answers in its raw.

        Only dev is asked again (``split``: the kernel's ``context.split``; ``""`` outside a run's
        prediction of a split): the spread is scored on dev, and another labelled split (FewCLUE's
        ``test_public``) would cost every variant's requests for nothing scored.
        """
        labelled = [index for index, example in enumerate(examples) if gold(example) is not None]
        if not self.renderers or not labelled or split not in ("dev", ""):
            return predictions
        subset = [examples[index] for index in labelled]
        answered = {name: answer(name, renderer, subset) for name, renderer in self.renderers.items()}
        result = list(predictions)
        for position, index in enumerate(labelled):
            prediction = predictions[index]
            raw = dict(prediction.raw) if isinstance(prediction.raw, dict) else {}
            values: dict[str, Any] = {DEFAULT: prediction.value}
            scores: dict[str, Any] = {DEFAULT: list(prediction.scores)} if prediction.scores else {}
            usage = list(raw.get("usage") or [])
            for name, variant in answered.items():
                other = variant[position]
                values[name] = other.value
                if other.scores:
                    scores[name] = list(other.scores)
                if isinstance(other.raw, dict):
                    usage += other.raw.get("usage") or []
            raw[RAW] = {"values": values, **({"scores": scores} if scores else {})}
            if usage:
                raw["usage"] = usage
            result[index] = dataclasses.replace(prediction, raw=raw)
        return result

    def info(self, default: Renderer | None) -> dict[str, Any] | None:
        """``model_info["prompt"]["variants"]``: each prompt asked and its template's hash, or why none was."""
        if self.setting == DEFAULT:
            return None
        if self.note is not None:
            return {"setting": self.setting, "applied": False, "note": self.note}
        hashes = {DEFAULT: sha256(default.skeleton()) if default is not None else None}
        hashes.update({name: sha256(renderer.skeleton()) for name, renderer in self.renderers.items()})
        return {"setting": self.setting, "applied": True, "template_sha256": hashes}


@contextlib.contextmanager
def worded(learner: Any, name: str, renderer: Renderer) -> Iterator[None]:
    """The learner asking through variant ``name``'s ``renderer`` with circular evaluation off (a variant is
    asked in the original order only), its progress lines naming the variant; restored afterwards."""
    asker = learner.asker
    saved = learner.renderer, learner.settings, asker.name, asker.label
    learner.renderer, learner.settings = renderer, dataclasses.replace(learner.settings, circular="off")
    asker.name, asker.label = f"{asker.name} (prompt {name})", f"{asker.label} (prompt {name})"
    try:
        yield
    finally:
        learner.renderer, learner.settings, asker.name, asker.label = saved
