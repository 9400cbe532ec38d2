"""Independent recomputations for the tests: plain loops, no code shared with the report.

The bootstrap reference draws the same seeded count vectors (that is the documented
algorithm: ``numpy.random.default_rng(seed).multinomial`` in chunks of 250) but then
expands every resample into its examples and computes the statistic one resample at a
time, the slow obvious way.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from typing import Any

import numpy as np

CHUNK = 250


def count_rows(units: int, resamples: int, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    rows: list[np.ndarray] = []
    while len(rows) < resamples:
        size = min(CHUNK, resamples - len(rows))
        rows += list(rng.multinomial(units, np.full(units, 1.0 / units), size=size))
    return rows


def unit_members(groups: Sequence[Hashable | None]) -> list[list[int]]:
    """Example indices of each unit, units numbered in order of first appearance."""
    order: dict[Any, list[int]] = {}
    for i, group in enumerate(groups):
        order.setdefault(("alone", i) if group is None else ("group", group), []).append(i)
    return list(order.values())


def bootstrap(statistic: Callable[[list[int]], float], groups: Sequence[Hashable | None], resamples: int,
              seed: int, confidence: float = 0.95) -> tuple[float, float]:
    """Percentile interval of ``statistic(list of drawn example indices)``."""
    units = unit_members(groups)
    values = []
    for counts in count_rows(len(units), resamples, seed):
        drawn = [i for unit, count in zip(units, counts) for _ in range(int(count)) for i in unit]
        values.append(statistic(drawn))
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(values, [tail, 100 - tail])
    return float(low), float(high)


def mean_of(values: Sequence[float]) -> Callable[[list[int]], float]:
    return lambda drawn: sum(values[i] for i in drawn) / len(drawn)


def macro_f1_of(gold: Sequence[Any], predicted: Sequence[Any]) -> Callable[[list[int]], float]:
    def statistic(drawn: list[int]) -> float:
        classes = {gold[i] for i in drawn} | {predicted[i] for i in drawn if predicted[i] is not None}
        total = 0.0
        for c in classes:
            tp = sum(1 for i in drawn if gold[i] == c and predicted[i] == c)
            fp = sum(1 for i in drawn if gold[i] != c and predicted[i] == c)
            fn = sum(1 for i in drawn if gold[i] == c and predicted[i] != c)
            total += 0.0 if tp == 0 else 2 * tp / (2 * tp + fp + fn)
        return 100 * total / len(classes)

    return statistic


def confusion_counts(records: Sequence[dict[str, Any]]) -> Counter[tuple[str, str]]:
    return Counter((str(r["gold"]), "(none)" if r["prediction"] is None else str(r["prediction"])) for r in records)
