"""A tiny model of the ``kbqa_triple`` kind, for tests only (registered on an isolated kernel).

It runs the kind as a model plugin would, by the kind's name and the example's fields, importing
nothing of clue-tasks-kgclue: the answer is the first candidate triple where the reader attached
any (``--set kb=...``), else the training answer of the same question, else three empty parts.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from clue_core.plugin import MODEL_FILE, ModelSpec, Prediction, hookimpl, write_json

KIND = "kbqa_triple"
SEPARATOR = " ||| "


class FirstCandidate:
    """First candidate, else the memorised train answer, else ``" |||  ||| "``."""

    def __init__(self) -> None:
        self.memory: dict[str, str] = {}

    def fit(self, train: Sequence[Any], dev: Sequence[Any], context: Any) -> None:
        self.memory = {e.question: SEPARATOR.join(e.answer) for e in train if e.answer is not None}

    def predict(self, examples: Sequence[Any]) -> list[Prediction]:
        return [Prediction(e.id, SEPARATOR.join(e.candidates[0]) if e.candidates
                           else self.memory.get(e.question, SEPARATOR.join(("", "", ""))))
                for e in examples]

    def save(self, directory: Path) -> None:
        write_json(Path(directory) / MODEL_FILE, {"model": "kg-first-candidate", "memory": self.memory})


def create(argument: str | None, task: Any, settings: Any) -> FirstCandidate:
    return FirstCandidate()


class TinyModelPlugin:
    @hookimpl
    def clue_models(self) -> list[ModelSpec]:
        return [ModelSpec("kg-first-candidate", "tests.kgclue.tiny_model:create", (KIND,),
                          "tests only: the first KB candidate, else the train answer of the same question")]
