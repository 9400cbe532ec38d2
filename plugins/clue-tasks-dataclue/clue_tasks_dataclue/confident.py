"""Confident learning on out-of-fold probabilities: which given labels are likely wrong.

Northcutt, Jiang & Chuang (2021), "Confident Learning: Estimating Uncertainty in Dataset Labels":
the threshold of class *j* is the mean probability of *j* over the examples labelled *j* (the
model's self-confidence on that class). An example labelled *y* is a **suspect** when its own
class's probability is below *t_y* and some other class *k* reaches its threshold (*p_k ≥ t_k*);
its suggested label is the likeliest such *k*, and suspects are ranked by the margin
*p_k − p_y* (largest first; ties by position). DataCLUE's own baselines use k-fold out-of-fold
predictions too, but rank by entropy (``baselines/single/delete_noise``) or relabel where three
seeds agree (``baselines/baseline_lxj``); per-class thresholds are this project's addition.

Pure Python and exact: the same probabilities give the same ranking on every machine.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Suspect:
    """One example whose given label is likely wrong."""

    index: int
    given: int
    suggested: int
    p_given: float
    p_suggested: float

    @property
    def margin(self) -> float:
        return self.p_suggested - self.p_given


def normalised(scores: Sequence[float]) -> list[float]:
    """Scores as probabilities: a softmax where any is negative (log-probabilities, logits), else scaled to sum 1."""
    values = [float(s) for s in scores]
    if any(v < 0 for v in values):
        top = max(values)
        exp = [math.exp(v - top) for v in values]
        return [v / sum(exp) for v in exp]
    total = sum(values)
    return [v / total for v in values] if total > 0 else [1.0 / len(values)] * len(values)


def thresholds(probabilities: Sequence[Sequence[float]], given: Sequence[int], classes: int) -> list[float | None]:
    """Per class, the mean probability of that class over the examples labelled with it (None: no example)."""
    sums = [0.0] * classes
    counts = [0] * classes
    for row, label in zip(probabilities, given, strict=True):
        sums[label] += row[label]
        counts[label] += 1
    return [sums[j] / counts[j] if counts[j] else None for j in range(classes)]


def suspects(probabilities: Sequence[Sequence[float]], given: Sequence[int], classes: int) -> list[Suspect]:
    """Every suspect, most likely mislabelled first (largest margin; ties by index)."""
    limits = thresholds(probabilities, given, classes)
    found = []
    for index, (row, label) in enumerate(zip(probabilities, given, strict=True)):
        own = limits[label]
        if own is None or row[label] >= own:
            continue
        others = [k for k in range(classes) if k != label and limits[k] is not None and row[k] >= limits[k]]
        if not others:
            continue
        best = max(others, key=lambda k: (row[k], -k))
        found.append(Suspect(index, label, best, row[label], row[best]))
    found.sort(key=lambda s: (-s.margin, s.index))
    return found


def precision_recall(found: Sequence[int], planted: Sequence[int]) -> tuple[float, float]:
    """Precision and recall of ``found`` indices against the ``planted`` ones (tests, docs)."""
    hits = len(set(found) & set(planted))
    return (hits / len(found) if found else 0.0, hits / len(planted) if planted else 1.0)
