"""How far a run's primary dev score may be off: ``metrics.json``'s ``uncertainty``.

A dev score is a mean over examples, but a reading-comprehension task asks several questions of one
passage, and the questions of one passage are right or wrong together more often than questions of
two. Treating them as independent understates the error: the unit that was sampled is the passage.
A task says what ties its examples together (``TaskSpec.cluster``, a function of an example naming
its group, and ``cluster_unit``, what a group is, in words); the record writer writes each example's
group into its prediction record (``group``) and this module gives, for the primary metric where it
is a mean of per-example values (accuracy, EM, F1):

* ``stderr``: the standard error of the mean with every example independent (sample sd / sqrt(n));
* ``clustered`` (a clustered task only): the cluster-robust standard error of the same mean
  (a ratio estimator: the sum of the values over the sum of the examples, over groups) and a 95%
  percentile bootstrap interval that resamples groups, not examples, with how many groups.

Pure Python (the kernel depends on no numpy): the bootstrap draws groups with ``random.Random(0)``,
1000 times, so it costs about groups x 1000 draws (a dev set of ~1,000 passages: a second at most). An
unclustered task gets its standard error only (no bootstrap: 12k examples would cost seconds); the
report (clue-report) draws every metric's interval itself, with numpy, over the same groups.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from typing import Any

from clue_core.errors import PluginError
from clue_core.examples import Example, MetricResult
from clue_core.specs import TaskSpec, resolve

RESAMPLES = 1000
CONFIDENCE = 0.95
SEED = 0


def group_function(task: TaskSpec) -> Callable[[Example], str | None] | None:
    """The task's ``cluster`` function, each answer given as a string (a group is a key: ``3`` and ``"3"``
    name one group in a JSON record either way), or None for a task whose examples stand alone."""
    if not task.cluster:
        return None
    try:
        function = resolve(task.cluster)
    except Exception as exc:
        raise PluginError(f"task {task.name}: cluster {task.cluster} could not be loaded "
                          f"({type(exc).__name__}: {exc})") from exc

    def group(example: Example) -> str | None:
        try:
            value = function(example)
        except Exception as exc:
            raise PluginError(f"task {task.name}: cluster {task.cluster} raised {type(exc).__name__}: {exc} "
                              f"(example {example.id!r})") from exc
        return None if value is None else str(value)

    return group


def groups_of(task: TaskSpec, examples: Sequence[Example]) -> list[str | None] | None:
    """Each example's group (None: it stands alone), or None for a task that declares no clusters."""
    group = group_function(task)
    return None if group is None else [group(example) for example in examples]


def uncertainty(task: TaskSpec, result: MetricResult, groups: Sequence[str | None] | None) -> dict[str, Any] | None:
    """``metrics.json``'s ``uncertainty`` of the primary metric, or None where it has no per-example values."""
    values = result.per_example.get(task.primary_metric)
    if not values or (groups is not None and len(groups) != len(values)):
        return None
    if not all(_finite(v) for v in values if v is not None):  # a metric's bug: no standard error of it
        return None
    kept = [(float(v), None if groups is None else groups[i]) for i, v in enumerate(values) if v is not None]
    if not kept:
        return None
    numbers = [v for v, _ in kept]
    found: dict[str, Any] = {"metric": task.primary_metric, "examples": len(numbers), "stderr": _stderr(numbers)}
    if groups is not None:
        found["clustered"] = clustered(kept, task.cluster_unit or "group")
    return found


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _stderr(values: Sequence[float]) -> float | None:
    n = len(values)
    if n < 2:
        return None
    mean = sum(values) / n
    return _round(math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1) / n))


def _sums(kept: Sequence[tuple[float, str | None]]) -> tuple[list[float], list[int]]:
    """Per group, the sum of its values and its number of examples (an example without a group alone)."""
    index: dict[Any, int] = {}
    sums: list[float] = []
    counts: list[int] = []
    for position, (value, group) in enumerate(kept):
        at = index.setdefault(("alone", position) if group is None else ("group", group), len(index))
        if at == len(sums):
            sums.append(0.0)
            counts.append(0)
        sums[at] += value
        counts[at] += 1
    return sums, counts


def clustered(kept: Sequence[tuple[float, str | None]], unit: str, *, resamples: int = RESAMPLES,
              confidence: float = CONFIDENCE, seed: int = SEED) -> dict[str, Any]:
    """The cluster-robust standard error and the group bootstrap interval of the mean of ``kept``'s values.

    The standard error is the ratio estimator's, ``sqrt(G/(G-1) * sum_g (S_g - mean * n_g)^2) / N``
    (S_g, n_g: a group's sum and size; N examples, G groups): with every group of one example it
    is the unclustered one. The interval's statistic is the pooled mean of a resample (the sum of
    the drawn groups' values over their examples), what the metric computes on a resampled set.
    With a single group there is neither (``None``): every resample is that group, and an interval
    ``[mean, mean]`` would claim a certainty one passage cannot give.
    """
    sums, counts = _sums(kept)
    groups, total = len(sums), sum(counts)
    mean = sum(sums) / total
    if groups < 2:
        return {"unit": unit, "groups": groups, "stderr": None, "low": None, "high": None,
                "resamples": 0, "confidence": confidence, "seed": seed, "method": "percentile"}
    stderr = _round(math.sqrt(groups / (groups - 1) * sum((s - mean * n) ** 2 for s, n in zip(sums, counts))) / total)
    rng, picks = random.Random(seed), range(groups)
    means = []
    for _ in range(resamples):
        drawn = rng.choices(picks, k=groups)
        means.append(sum(map(sums.__getitem__, drawn)) / sum(map(counts.__getitem__, drawn)))
    tail = (1.0 - confidence) / 2 * 100
    ordered = sorted(means)
    low, high = _percentile(ordered, tail), _percentile(ordered, 100 - tail)
    return {"unit": unit, "groups": groups, "stderr": stderr, "low": _round(low), "high": _round(high),
            "resamples": resamples, "confidence": confidence, "seed": seed, "method": "percentile"}


def _percentile(ordered: Sequence[float], q: float) -> float:
    """The ``q``-th percentile with linear interpolation between order statistics (numpy's default)."""
    position = q / 100 * (len(ordered) - 1)
    below = math.floor(position)
    above = min(below + 1, len(ordered) - 1)
    return ordered[below] + (ordered[above] - ordered[below]) * (position - below)


def _round(value: float) -> float:
    return round(value, 6)
