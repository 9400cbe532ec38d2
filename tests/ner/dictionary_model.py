"""A tiny entity-spans model for the tests ONLY: it predicts every gold string it saw in train.

It runs the kind by its name, as a real model plugin must (it never imports clue_tasks_ner), so the
task is tested end to end through ``clue-core run`` / ``submit`` / ``evaluate`` without torch. Each
entity text of train is remembered with its most frequent type; a text is then tagged at every
place each remembered string occurs (longer strings first, no two predictions overlapping).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from clue_core.plugin import MODEL_FILE, ModelSpec, Prediction, hookimpl, write_json

ENTITY_SPANS = "entity_spans"
NAME = "ner-dictionary"


def find(dictionary: dict[str, str], text: str) -> list[list[Any]]:
    """``[type, start, end)`` of every occurrence of the dictionary's strings, longest first, none overlapping."""
    taken = [False] * len(text)
    spans = []
    for entity in sorted(dictionary, key=lambda s: (-len(s), s)):
        start = text.find(entity)
        while start >= 0:
            end = start + len(entity)
            if not any(taken[start:end]):
                taken[start:end] = [True] * len(entity)
                spans.append([dictionary[entity], start, end])
            start = text.find(entity, start + 1)
    return sorted(spans, key=lambda s: (s[1], s[2]))


class Dictionary:
    """The learner: ``fit`` reads the gold strings, ``predict`` finds them."""

    def __init__(self) -> None:
        self.dictionary: dict[str, str] = {}

    def fit(self, train: Sequence[Any], dev: Sequence[Any], context: Any) -> None:
        seen: dict[str, Counter[str]] = defaultdict(Counter)
        for example in train:
            for kind, start, end in example.entities or ():
                seen[example.text[start:end]][kind] += 1
        self.dictionary = {entity: kinds.most_common(1)[0][0] for entity, kinds in seen.items()}

    def predict(self, examples: Sequence[Any]) -> list[Prediction]:
        return [Prediction(e.id, find(self.dictionary, e.text)) for e in examples]

    def save(self, directory: Path) -> None:
        write_json(Path(directory) / MODEL_FILE, {"model": NAME, "dictionary": self.dictionary})


def create(argument: str | None, task: Any, settings: Any) -> Dictionary:
    return Dictionary()


class Plugin:
    """The model's hooks, registered on an isolated kernel by the tests."""

    @hookimpl
    def clue_models(self) -> list[ModelSpec]:
        return [ModelSpec(NAME, f"{__name__}:create", (ENTITY_SPANS,),
                          "tests only: every entity string seen in train, at every place it occurs")]
