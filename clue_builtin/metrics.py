"""Built-in metrics: accuracy and macro-F1, in pure Python on the 0-100 scale.

They work for every kind whose gold is a single value: a label string (classification)
or a choice index (multiple choice). A missing prediction (``None``) counts as wrong.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from clue_core.plugin import Example, MetricResult, Prediction, gold_of


def _pairs(examples: Sequence[Example], predictions: Sequence[Prediction | None]) -> list[tuple[object, object]]:
    if len(examples) != len(predictions):
        raise ValueError(f"{len(predictions)} predictions for {len(examples)} examples")
    return [
        (gold_of(example), None if prediction is None else prediction.value)
        for example, prediction in zip(examples, predictions)
        if gold_of(example) is not None
    ]


def accuracy(examples: Sequence[Example], predictions: Sequence[Prediction | None]) -> MetricResult:
    """Share of labelled examples whose prediction equals the gold value, ×100, with each
    example's 100 or 0 (None without gold) for bootstrap intervals."""
    pairs = _pairs(examples, predictions)
    if not pairs:
        return MetricResult({})
    per_example: list[float | None] = []
    for example, prediction in zip(examples, predictions):
        gold = gold_of(example)
        hit = prediction is not None and prediction.value == gold
        per_example.append(None if gold is None else 100.0 * hit)
    correct = sum(1 for gold, predicted in pairs if predicted is not None and predicted == gold)
    return MetricResult({"accuracy": 100.0 * correct / len(pairs)}, {"accuracy": per_example})


def macro_f1(examples: Sequence[Example], predictions: Sequence[Prediction | None]) -> dict[str, float]:
    """Unweighted mean of per-class F1 over the classes present in gold or predictions, ×100."""
    pairs = _pairs(examples, predictions)
    if not pairs:
        return {}
    classes = {gold for gold, _ in pairs} | {p for _, p in pairs if p is not None}
    scores = []
    for cls in classes:
        tp = sum(1 for g, p in pairs if g == cls and p == cls)
        fp = sum(1 for g, p in pairs if g != cls and p == cls)
        fn = sum(1 for g, p in pairs if g == cls and p != cls)
        scores.append(0.0 if tp == 0 else 2 * tp / (2 * tp + fp + fn))
    # fsum: exact whatever order the set yields its classes (string hashing differs per process),
    # so the same predictions give the same bits in every run
    return {"macro_f1": 100.0 * math.fsum(scores) / len(classes)}
