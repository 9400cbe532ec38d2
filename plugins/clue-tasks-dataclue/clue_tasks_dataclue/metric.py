"""DataCLUE's metric: macro F1 as the official ``compute_f1.py`` computes it.

``compute_f1.py`` calls ``sklearn.metrics.f1_score(y_true, y_pred, average='macro')`` on the
``label`` values of ``test_public.json`` and of the prediction file, line by line. sklearn
averages over the **sorted union of labels in gold and predictions** (not over labels.json):
a label predicted but absent from the gold adds a 0, a label absent from both never counts,
and a label's F1 is 0 when it has no true positive. Per label F1 = 2·TP / (2·TP + FP + FN), and
the mean is numpy's (``np.mean`` of the per-label array), so the total is sklearn's to the bit
where numpy is installed (a plain float sum otherwise, equal to 1e-12). Labels are compared as
strings: the official script raises on triclue, whose gold labels are integers and whose
predictions are strings. A missing prediction counts as wrong for its gold label and adds no
label. Micro F1 (= accuracy over the lines) is reported beside it, ×100 both.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def macro_f1(gold: Sequence[str], predicted: Sequence[str | None]) -> float:
    """sklearn's ``f1_score(gold, predicted, average='macro')`` as a fraction (0..1)."""
    labels = sorted({*gold, *(p for p in predicted if p is not None)})
    if not labels:
        return 0.0
    tp = dict.fromkeys(labels, 0)
    fp = dict.fromkeys(labels, 0)
    fn = dict.fromkeys(labels, 0)
    for g, p in zip(gold, predicted, strict=True):
        if g == p:
            tp[g] += 1
            continue
        fn[g] += 1
        if p is not None:
            fp[p] += 1
    scores = [0.0 if tp[label] == 0 else 2 * tp[label] / (2 * tp[label] + fp[label] + fn[label])
              for label in labels]
    return _mean(scores)


def _mean(values: list[float]) -> float:
    try:
        import numpy
    except ImportError:  # pragma: no cover - numpy comes with every model plugin
        import math

        return math.fsum(values) / len(values)
    return float(numpy.mean(numpy.asarray(values, dtype=numpy.float64)))


def dataclue_f1(examples: Sequence[Any], predictions: Sequence[Any]) -> dict[str, float]:
    """The kernel's metric hook: ``macro_f1`` and ``micro_f1`` ×100 over the labelled examples."""
    gold: list[str] = []
    predicted: list[str | None] = []
    for example, prediction in zip(examples, predictions, strict=True):
        if example.label is None:
            continue
        gold.append(str(example.label))
        value = None if prediction is None or prediction.value is None else str(prediction.value)
        predicted.append(value)
    if not gold:
        return {}
    correct = sum(1 for g, p in zip(gold, predicted) if g == p)
    return {"macro_f1": 100.0 * macro_f1(gold, predicted), "micro_f1": 100.0 * correct / len(gold)}
