"""A deterministic classification model for tests only: character naive Bayes with add-one smoothing.

Its probabilities are exact functions of the training texts (no floats that differ by CPU beyond
the last bits, no randomness), so an audit's confident-learning ranking can be asserted on them:
texts built from class-specific characters are separated, and a swapped label stands out.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from clue_core.plugin import CLASSIFICATION, MODEL_FILE, ModelSpec, Prediction, hookimpl, write_json


class CharBayes:
    """P(label | text) ∝ P(label) · Π P(char | label), smoothed."""

    def __init__(self, labels: Sequence[str]) -> None:
        self.labels = list(labels)
        self.prior: Counter[str] = Counter()
        self.chars: dict[str, Counter[str]] = {label: Counter() for label in self.labels}
        self.vocabulary: set[str] = set()

    def fit(self, train: Sequence[Any], dev: Sequence[Any], context: Any) -> None:
        for example in train:
            text = example.text + (example.text_pair or "")
            self.prior[example.label] += 1
            self.chars[example.label].update(text)
            self.vocabulary.update(text)

    def _probabilities(self, text: str) -> list[float]:
        total = sum(self.prior.values())
        logs = []
        for label in self.labels:
            counts, size = self.chars[label], sum(self.chars[label].values())
            value = math.log((self.prior[label] + 1) / (total + len(self.labels)))
            value += sum(math.log((counts[c] + 1) / (size + len(self.vocabulary) + 1)) for c in text)
            logs.append(value)
        top = max(logs)
        exp = [math.exp(v - top) for v in logs]
        return [v / sum(exp) for v in exp]

    def predict(self, examples: Sequence[Any]) -> list[Prediction]:
        out = []
        for example in examples:
            p = self._probabilities(example.text + (example.text_pair or ""))
            best = max(range(len(p)), key=lambda i: (p[i], -i))
            out.append(Prediction(example.id, self.labels[best], tuple(p)))
        return out

    def save(self, directory: Path) -> None:
        write_json(Path(directory) / MODEL_FILE, {"model": "dc-char", "labels": self.labels})


def create(argument: str | None, task: Any, settings: Any) -> CharBayes:
    return CharBayes(task.labels)


class CharModelPlugin:
    @hookimpl
    def clue_models(self) -> list[ModelSpec]:
        return [ModelSpec("dc-char", "tests.dataclue.char_model:create", (CLASSIFICATION,),
                          "tests only: character naive Bayes, deterministic probabilities")]
