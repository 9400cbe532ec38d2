"""The paired bootstrap of two sides (runs) on the examples of one scored split, for the report.

It is ``clue-core bootstrap --split SPLIT``'s computation (clue-sweep's ``clue_sweep.bootstrap``),
written again here because a plugin imports no other plugin's package: the same examples rebuilt
from the records' gold, the task's own metric through the kernel, the same generator, seed and
order of draws, so the two give the same numbers for the same seed and draws
(``tests/report/test_data_centric.py`` holds them equal). Where the metric gives per-example values
whose mean is its total the draws are vector operations; otherwise (DataCLUE's macro F1) the metric
runs again on each draw. The unit is the example, or the records' ``group`` (a passage) where every
run's records name theirs (a record without one stands alone). The p-value is two-sided,
``(k + 1) / (draws + 1)`` with ``k`` the draws at least as far from the observed difference as it lies
from zero.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Hashable, Sequence
from typing import Any

from clue_core.plugin import (
    CLASSIFICATION,
    MULTIPLE_CHOICE,
    ClassificationExample,
    ClueError,
    MetricResult,
    MultipleChoiceExample,
    Prediction,
    Registry,
    SpanExample,
    TaskSpec,
)

#: Draws when each draw is a vector operation, and when the metric runs again on every draw (bootstrap's).
FAST_SAMPLES = 10000
SLOW_SAMPLES = 1000
CONFIDENCE = 0.95


def _example(kind: str, record: Any) -> Any:
    gold, prediction = record.gold, record.prediction
    if kind == CLASSIFICATION:
        return ClassificationExample(id=record.id, text="", label=gold)
    if kind == MULTIPLE_CHOICE:
        size = max([len(record.scores or ()), *(v + 1 for v in (gold, prediction) if isinstance(v, int)), 1])
        return MultipleChoiceExample(id=record.id, context="", question="", choices=tuple(map(str, range(size))),
                                     label=gold)
    answers = tuple((str(text), None) for text in gold) if isinstance(gold, list) else None
    return SpanExample(id=record.id, context="", question="", answers=answers)


def _metric(kernel: Registry, task: TaskSpec, name: str) -> tuple[Any, dict[str, Any]]:
    """The compute function of the task's metric that produces ``name``, and its setting defaults."""
    from clue_core.plugin import resolve

    for metric_name in task.metrics:
        spec = kernel.metric(metric_name)
        if name in spec.totals:
            if spec.uses_model:
                raise ClueError(f"{task.name}'s {name} asks a model (a judge) for each answer; it cannot be "
                                "re-scored on resamples")
            kwargs = {"settings": {s.name: s.default for s in spec.settings}} if spec.settings else {}
            return resolve(spec.compute), kwargs
    raise ClueError(f"{task.name}: none of its metrics ({', '.join(task.metrics)}) produces {name}")


def _totals(result: Any) -> tuple[dict[str, float], dict[str, Sequence[float | None]]]:
    if isinstance(result, MetricResult):
        return dict(result.totals), dict(result.per_example)
    return dict(result), {}


def groups_of(answers: Sequence[dict[str, Any]], order: Sequence[str], files: Sequence[Any] = ()
              ) -> list[Hashable] | None:
    """Each example's group (the passage it shares), in ``order``, where every run's records name groups;
    ``None`` where some run's name none (a run made before records had groups: examples are resampled). A
    record without one in a run whose others name theirs stands alone, as in ``metrics.json``'s and the
    report's intervals. Runs that group one example apart were not run on the same data: one line naming
    both records' file (``files``: each run's predictions file) and line."""
    found = [[getattr(run[i], "group", None) for i in order] for run in answers]
    if any(all(group is None for group in run) for run in found):
        return None
    keys = [[("alone", order[k]) if g is None else ("group", g) for k, g in enumerate(run)] for run in found]
    names = [*files, *[None] * len(answers)]
    for number, (run, named) in enumerate(zip(answers[1:], keys[1:]), 1):
        k = next((k for k, key in enumerate(named) if key != keys[0][k]), None)
        if k is not None:
            first, other = answers[0][order[k]], run[order[k]]
            raise ClueError(f"{_where(names[0], first)} and {_where(names[number], other)} put example {order[k]!r} "
                            f"in different groups (passages: {first.group!r} and {other.group!r}); they were not "
                            "run on the same data")
    return list(keys[0])


def _where(file: Any, record: Any) -> str:
    """``path:line`` of a prediction record, for a message."""
    return f"{file or 'predictions'}:{getattr(record, 'line', '?')}"


def check_units(units: int, split: str) -> None:
    """At least two resampling units: with one, every draw is the observed difference (interval [d, d], and a
    p-value as small as the draws allow), a certainty one example or passage cannot give."""
    if units < 2:
        raise ClueError(f"only {units} {split} example or passage to resample: a bootstrap needs at least 2 "
                        "(a --limit 1 run?); compare runs on more examples")


def _members(groups: Sequence[Hashable] | None, size: int) -> list[list[int]]:
    if groups is None:
        return [[i] for i in range(size)]
    members: dict[Hashable, list[int]] = {}
    for position, group in enumerate(groups):
        members.setdefault(group, []).append(position)
    return list(members.values())


def paired(kernel: Registry, task: TaskSpec, metric: str, side_a: Sequence[dict[str, Any]],
           side_b: Sequence[dict[str, Any]], *, samples: int | None = None, seed: int = 0,
           confidence: float = CONFIDENCE, files: Sequence[Any] = ()) -> dict[str, Any]:
    """``A − B`` in ``metric`` with its percentile interval and p-value; each side a list of runs, each run
    its records by example id (the same ids and gold on every run: the caller checks); ``files``: each run's
    predictions file, A's then B's, for messages."""
    import numpy as np

    compute, kwargs = _metric(kernel, task, metric)
    order = list(side_a[0])
    groups = groups_of([*side_a, *side_b], order, files)
    examples = [_example(task.kind, side_a[0][i]) for i in order]

    built: dict[int, list[Prediction]] = {}  # each run's predictions in ``order``, made once (a record's fields
    # are read through checks: making them again on each of a thousand draws was most of the time)

    def predictions(answers: dict[str, Any], index: Sequence[int]) -> list[Prediction]:
        if id(answers) not in built:
            built[id(answers)] = [Prediction(id=r.id, value=r.prediction, scores=tuple(r.scores) if r.scores is not
                                             None else None) for r in (answers[i] for i in order)]
        every = built[id(answers)]
        return [every[i] for i in index]

    sides = (side_a, side_b)
    scored = [[_totals(compute(examples, predictions(run, range(len(order))), **kwargs)) for run in side]
              for side in sides]
    per_run = [[totals.get(metric) for totals, _ in side] for side in scored]
    if any(value is None for side in per_run for value in side):
        raise ClueError(f"{task.name}: {metric} is undefined on these predictions (no gold?)")
    observed = statistics.fmean(per_run[0]) - statistics.fmean(per_run[1])
    values = [[per_example.get(metric) for _, per_example in side] for side in scored]
    fast = all(v is not None and len(v) == len(order) for side in values for v in side) and all(
        _is_mean(v, total) for side, totals in zip(values, per_run) for v, total in zip(side, totals))
    draws_wanted = samples or (FAST_SAMPLES if fast else SLOW_SAMPLES)
    rng = np.random.default_rng(seed)
    if fast:
        labelled = [i for i, v in enumerate(values[0][0]) if v is not None]
        vectors = [np.mean([[run[i] for i in labelled] for run in side], axis=0) for side in values]
        gap = vectors[0] - vectors[1]
        check_units(len(labelled) if groups is None else len({groups[i] for i in labelled}), "scored")
        if groups is None:
            draws = np.concatenate([gap[rng.integers(0, len(labelled), (size, len(labelled)))].mean(axis=1)
                                    for size in _chunks(draws_wanted, 200_000 // max(len(labelled), 1) + 1)])
        else:
            units = _members([groups[i] for i in labelled], len(labelled))
            sums = np.array([gap[m].sum() for m in units])
            counts = np.array([float(len(m)) for m in units])
            draws = np.concatenate([sums[drawn].sum(axis=1) / counts[drawn].sum(axis=1)
                                    for drawn in (rng.integers(0, len(units), (size, len(units)))
                                                  for size in _chunks(draws_wanted, 200_000 // len(units) + 1))])
    else:
        units = _members(groups, len(order))
        check_units(len(units), "scored")
        draws = np.empty(draws_wanted)
        for k in range(draws_wanted):
            drawn_units = rng.integers(0, len(units), len(units))
            index = [i for u in drawn_units for i in units[u]] if groups is not None else drawn_units
            drawn = [examples[i] for i in index]
            means = [statistics.fmean(_totals(compute(drawn, predictions(run, index), **kwargs))[0][metric]
                                      for run in side) for side in sides]
            draws[k] = means[0] - means[1]
    tail = (1.0 - confidence) / 2
    far = int(np.sum(np.abs(draws - observed) >= abs(observed) - 1e-12))
    return {"a": statistics.fmean(per_run[0]), "b": statistics.fmean(per_run[1]), "difference": observed,
            "low": float(np.quantile(draws, tail)), "high": float(np.quantile(draws, 1 - tail)),
            "p_value": (far + 1) / (draws_wanted + 1), "examples": len(order),
            **({"unit": "group", "groups": len(set(groups))} if groups is not None else {"unit": "example"}),
            "samples": draws_wanted, "seed": seed, "confidence": confidence,
            "method": "per-example values" if fast else "metric re-run on each draw"}


def _is_mean(values: Sequence[float | None], total: float) -> bool:
    present = [v for v in values if v is not None]
    return bool(present) and math.isclose(statistics.fmean(present), total, rel_tol=1e-9, abs_tol=1e-6)


def _chunks(total: int, size: int) -> list[int]:
    return [min(size, total - start) for start in range(0, total, size)]
