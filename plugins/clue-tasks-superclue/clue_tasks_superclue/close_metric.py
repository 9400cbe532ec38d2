"""The ``superclue_close`` metric: multiple-choice accuracy overall and per dimension.

The dimension of each example is read from its id (``"<dimension>/<question id>"``, see
:mod:`clue_tasks_superclue.reader`), so the per-dimension accuracies can be set beside the
open scores of the same dimensions (``close:<dimension>`` beside ``dimension:<dimension>``).
A missing or unanswered prediction counts as wrong.
"""

from __future__ import annotations

from collections.abc import Sequence

from clue_core.plugin import MetricResult, MultipleChoiceExample, Prediction
from clue_tasks_superclue.reader import dimension_of_close_id


def compute(examples: Sequence[MultipleChoiceExample], predictions: Sequence[Prediction | None]) -> MetricResult:
    correct: list[float | None] = []
    by_dimension: dict[str, list[float]] = {}
    for example, prediction in zip(examples, predictions):
        if example.label is None:
            correct.append(None)
            continue
        right = 100.0 if prediction is not None and prediction.value == example.label else 0.0
        correct.append(right)
        by_dimension.setdefault(dimension_of_close_id(example.id), []).append(right)
    scored = [value for value in correct if value is not None]
    totals: dict[str, float] = {}
    if scored:
        totals["accuracy"] = sum(scored) / len(scored)
    for dimension, values in by_dimension.items():
        totals[f"close:{dimension}"] = sum(values) / len(values)
    return MetricResult(totals, {"accuracy": correct})
