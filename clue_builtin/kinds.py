"""The three kinds the built-in plugin declares: each one's example check and prediction check.

Classification, span extraction and multiple choice are shared by several task plugins (classic
CLUE, FewCLUE, the MRC tasks, SuperCLUE's closed questions), so they come with every install; their
example dataclasses are :mod:`clue_core.plugin`'s shared vocabulary. The kernel calls these
functions through each kind's :class:`~clue_core.plugin.KindSpec`: ``check_example`` on every
example a reader returns, ``check_prediction`` on every value a leaderboard file or a run's
predictions give. Whether a span answer occurs in its context is *not* checked: real gold answers
sometimes do not.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from clue_core.plugin import ClassificationExample, MultipleChoiceExample, SpanExample, TaskSpec

Problem = tuple[str, str] | None


@lru_cache(maxsize=64)
def _label_set(labels: tuple[str, ...]) -> frozenset[str]:
    return frozenset(labels)


def check_classification(task: TaskSpec, example: ClassificationExample) -> Problem:
    """A gold label is one of the task's labels (when the task lists them)."""
    if example.label is not None and task.labels and example.label not in _label_set(task.labels):
        return "label", f"unknown label {example.label!r} (known: {', '.join(sorted(task.labels)[:20])})"
    return None


def check_span(task: TaskSpec, example: SpanExample) -> Problem:
    """Every gold answer has a non-empty text."""
    for text, _ in example.answers or ():
        if not isinstance(text, str) or not text.strip():
            return "answers", "empty answer text"
    return None


def check_choice(task: TaskSpec, example: MultipleChoiceExample) -> Problem:
    """There are choices, and a gold index points at one of them."""
    if not example.choices:
        return "choices", "no choices"
    if example.label is not None and not 0 <= example.label < len(example.choices):
        return "label", f"answer index {example.label} out of range for {len(example.choices)} choices"
    return None


def label_prediction(task: TaskSpec, example: ClassificationExample, value: Any) -> str | None:
    """A classification prediction is one of the task's label strings (not a class index)."""
    if not isinstance(value, str):
        hint = ""
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < len(task.labels):
            hint = f" (a class index? the leaderboard wants label strings such as {task.labels[value]!r})"
        return f"expected a label string, got {json.dumps(value)}{hint}"
    if task.labels and value not in _label_set(task.labels):
        return f"{value!r} is not a label of {task.name}"
    return None


def choice_prediction(task: TaskSpec, example: MultipleChoiceExample, value: Any) -> str | None:
    """A multiple-choice prediction is the index of one of the example's choices."""
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < len(example.choices):
        return f"expected a choice index 0..{len(example.choices) - 1}, got {json.dumps(value)}"
    return None


def span_prediction(task: TaskSpec, example: SpanExample, value: Any) -> str | None:
    """A span prediction is the answer's text."""
    return None if isinstance(value, str) else f"expected an answer string, got {json.dumps(value)}"


def answer_texts(answers: tuple[tuple[str, int | None], ...]) -> list[str]:
    """A span question's gold as its run's prediction records write it: the answers' texts, without
    their offsets (what a reader of ``predictions/dev.jsonl`` compares an answer text with)."""
    return [text for text, _ in answers]
