"""A pure-Python baseline learner, so the whole pipeline runs and is tested without torch.

It predicts the majority label (classification), the most frequent answer index
(multiple choice, among the choices an example actually has) or the first sentence of
the context (span extraction). Its numbers are the floor any real model must beat.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from clue_core.plugin import (
    MODEL_FILE,
    ClassificationExample,
    ClueError,
    Example,
    MultipleChoiceExample,
    Prediction,
    RunContext,
    SpanExample,
    TaskSpec,
    write_json,
)

_SENTENCE_END = re.compile(r"[。！？!?；;]")


class BaselineLearner:
    """Majority-class / most-frequent-choice / first-sentence predictor."""

    def __init__(self, task_name: str, kind: str, labels: Sequence[str] = ()) -> None:
        self.task_name = task_name
        self.kind = kind
        self.labels = list(labels)
        self.majority: str | int | None = None

    def fit(self, train: Sequence[Example], dev: Sequence[Example], context: RunContext) -> None:
        """Count gold values in train (dev when there is no train); ties go to the first seen."""
        golds = [getattr(e, "label", None) for e in (train or dev)]
        counts = Counter(g for g in golds if g is not None)
        if counts:
            self.majority = counts.most_common(1)[0][0]

    def predict(self, examples: Sequence[Example]) -> list[Prediction]:
        return [self._predict_one(example) for example in examples]

    def _predict_one(self, example: Example) -> Prediction:
        if isinstance(example, SpanExample):
            return Prediction(example.id, first_sentence(example.context))
        if isinstance(example, MultipleChoiceExample):
            n = len(example.choices)
            best = self.majority if isinstance(self.majority, int) and self.majority < n else 0
            return Prediction(example.id, best, tuple(1.0 if i == best else 0.0 for i in range(n)))
        assert isinstance(example, ClassificationExample)
        label = self.majority if self.majority is not None else (self.labels[0] if self.labels else "")
        scores = tuple(1.0 if lab == label else 0.0 for lab in self.labels) if self.labels else None
        return Prediction(example.id, label, scores)

    def save(self, directory: Path) -> None:
        write_json(
            Path(directory) / MODEL_FILE,
            {"model": "baseline", "task": self.task_name, "kind": self.kind, "labels": self.labels,
             "majority": self.majority},
        )

    @classmethod
    def load(cls, directory: Path) -> BaselineLearner:
        path = Path(directory) / MODEL_FILE
        try:
            state = json.loads(path.read_text(encoding="utf-8"))
            learner = cls(str(state["task"]), str(state["kind"]), [str(label) for label in state.get("labels", ())])
            learner.majority = state.get("majority")
        except (OSError, json.JSONDecodeError, KeyError, TypeError) as exc:
            raise ClueError(f"{path}: not a saved baseline model ({type(exc).__name__}: {exc})") from None
        if learner.kind == "classification" and learner.labels and learner.majority not in (None, *learner.labels):
            raise ClueError(f"{path}: saved majority label {learner.majority!r} is not one of its labels")
        return learner


def first_sentence(context: str) -> str:
    """The context up to and including its first sentence-ending mark (at most 50 characters)."""
    match = _SENTENCE_END.search(context)
    end = match.end() if match else len(context)
    return context[: min(end, 50)]


def create(argument: str | None, task: TaskSpec, settings: Mapping[str, Any]) -> BaselineLearner:
    """Model factory: a fresh learner, or one loaded from a saved run's model directory."""
    if argument:
        learner = BaselineLearner.load(Path(argument))
        # a model trained on one task may predict another with the same labels (CMNLI/OCNLI → diagnostics)
        if learner.task_name != task.name and (learner.kind != task.kind or tuple(learner.labels) != task.labels):
            raise ClueError(f"{argument}: this model was trained for {learner.task_name}, whose labels differ "
                            f"from {task.name}'s")
        return learner
    return BaselineLearner(task.name, task.kind, task.labels)
