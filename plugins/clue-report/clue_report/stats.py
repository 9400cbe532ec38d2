"""Uncertainty: seeded, vectorised bootstrap intervals and the spread over seeds.

A dev score from a few hundred examples moves by points between resamples, so every dev
metric gets a 95% percentile bootstrap interval. Resampling is done over *units*: single
examples, or clusters of examples that are not independent (CHID's blanks of one passage
are decoded jointly, so the passage is the unit). One resample is a vector of counts
(how often each unit was drawn), drawn for many resamples at once as a multinomial
matrix; each statistic is then a few matrix products, with no Python loop per resample.
The generator is seeded, so a report is reproducible number for number.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

RESAMPLES = 1000
CONFIDENCE = 0.95
SEED = 0
#: Resamples drawn per matrix, to bound memory on large dev sets (CMNLI: 12k examples).
CHUNK = 250


@dataclass(frozen=True)
class Interval:
    """A percentile bootstrap interval and what it was drawn over."""

    low: float
    high: float
    units: int
    unit: str
    resamples: int = RESAMPLES
    confidence: float = CONFIDENCE
    seed: int = SEED

    def as_dict(self) -> dict[str, float | int | str]:
        return {"low": self.low, "high": self.high, "units": self.units, "unit": self.unit,
                "resamples": self.resamples, "confidence": self.confidence, "seed": self.seed}


def unit_index(groups: Sequence[Hashable | None]) -> np.ndarray:
    """Each example's unit number: examples sharing a group form one unit; ``None`` stands alone."""
    index: dict[Hashable, int] = {}
    units = np.empty(len(groups), dtype=np.int64)
    for position, group in enumerate(groups):
        key = ("__alone__", position) if group is None else ("group", group)
        units[position] = index.setdefault(key, len(index))
    return units


def resample_counts(units: int, resamples: int, seed: int) -> Iterator[np.ndarray]:
    """``(k, units)`` matrices of draw counts, ``resamples`` rows in all, from one seeded generator."""
    rng = np.random.default_rng(seed)
    probabilities = np.full(units, 1.0 / units)
    done = 0
    while done < resamples:
        size = min(CHUNK, resamples - done)
        yield rng.multinomial(units, probabilities, size=size).astype(np.float64)
        done += size


def _interval(statistic: Callable[[np.ndarray], np.ndarray], units: int, unit: str, resamples: int,
              confidence: float, seed: int) -> Interval:
    values = np.concatenate([statistic(counts) for counts in resample_counts(units, resamples, seed)])
    tail = (1.0 - confidence) / 2 * 100
    low, high = np.percentile(values, [tail, 100 - tail])
    return Interval(float(low), float(high), units, unit, resamples, confidence, seed)


def _per_unit(values: np.ndarray, units: np.ndarray, n_units: int) -> np.ndarray:
    """Sum of ``values`` (rows: examples) per unit."""
    summed = np.zeros((n_units, *values.shape[1:]), dtype=np.float64)
    np.add.at(summed, units, values)
    return summed


def bootstrap_mean(values: Sequence[float], groups: Sequence[Hashable | None] | None = None, *,
                   unit: str = "example", resamples: int = RESAMPLES, confidence: float = CONFIDENCE,
                   seed: int = SEED) -> Interval:
    """Interval of the mean of per-example values (accuracy ×100, EM, F1), resampling units.

    With clusters the statistic is the pooled mean over the drawn examples (sum over sum
    of counts), which is what the metric computes on a resampled set.
    """
    data = np.asarray(values, dtype=np.float64)
    if data.size == 0:
        raise ValueError("no values to bootstrap")
    units = unit_index(groups if groups is not None else [None] * len(data))
    n_units = int(units.max()) + 1
    sums, counts = _per_unit(data, units, n_units), _per_unit(np.ones_like(data), units, n_units)
    return _interval(lambda w: (w @ sums) / (w @ counts), n_units, unit, resamples, confidence, seed)


def bootstrap_macro_f1(gold: Sequence[Hashable], predicted: Sequence[Hashable | None],
                       groups: Sequence[Hashable | None] | None = None, *, unit: str = "example",
                       resamples: int = RESAMPLES, confidence: float = CONFIDENCE, seed: int = SEED) -> Interval:
    """Interval of macro-F1 ×100 as clue-core computes it: the mean F1 over the classes that
    occur in the resample's gold or predictions; a missing prediction is a false negative.

    Per unit we keep true positives, gold counts and predicted counts per class; a
    resample's F1 per class is ``2·tp / (gold + predicted)``.
    """
    if len(gold) == 0:
        raise ValueError("no values to bootstrap")
    classes = {value: i for i, value in enumerate(dict.fromkeys([*gold, *(p for p in predicted if p is not None)]))}
    n, c = len(gold), len(classes)
    gold_hot, predicted_hot = np.zeros((n, c)), np.zeros((n, c))
    gold_hot[np.arange(n), [classes[g] for g in gold]] = 1.0
    for row, value in enumerate(predicted):
        if value is not None:
            predicted_hot[row, classes[value]] = 1.0
    units = unit_index(groups if groups is not None else [None] * n)
    n_units = int(units.max()) + 1
    tp = _per_unit(gold_hot * predicted_hot, units, n_units)
    totals = _per_unit(gold_hot + predicted_hot, units, n_units)

    def statistic(w: np.ndarray) -> np.ndarray:
        hits, seen = w @ tp, w @ totals
        present = seen > 0
        f1 = np.divide(2 * hits, seen, out=np.zeros_like(hits), where=present)
        return 100.0 * f1.sum(axis=1) / present.sum(axis=1)

    return _interval(statistic, n_units, unit, resamples, confidence, seed)


def clustered_line(report: Mapping[str, Any]) -> str:
    """The sentence the report shows beside its intervals: which tasks resample groups, and by what
    (empty where none does, so a report without such tasks reads as before)."""
    clustered = (report.get("bootstrap") or {}).get("clustered") or {}
    if not clustered:  # nothing to say: every interval resamples examples, as the header says
        return ""
    by_unit: dict[str, list[str]] = {}
    for task, unit in clustered.items():
        by_unit.setdefault(str(unit), []).append(str(task))
    said = "; ".join(f"by {unit} for {', '.join(tasks)}" for unit, tasks in by_unit.items())
    return (f"Intervals are clustered {said}: their questions share it, so whole groups are resampled, "
            f"not questions; other tasks' intervals resample examples.")


def spread(values: Sequence[float]) -> dict[str, float | int]:
    """Mean and sample standard deviation (n-1) of one metric over runs that differ only in seed."""
    n = len(values)
    mean = sum(values) / n
    std = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1)) if n > 1 else 0.0
    return {"mean": mean, "std": std, "n": n}
