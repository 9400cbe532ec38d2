"""A paired bootstrap between two sides (a run each, or the seeds of two configurations) on one task.

Both sides answered the same examples of one scored split (dev by default; ``test_public`` for
FewCLUE and DataCLUE, whose users change dev), so the examples are resampled once per draw and
both sides are scored on the same draw: what varies between draws is which examples were asked,
and the difference between the sides is measured on each. The difference is ``A − B`` in the
task's primary metric (each side the mean over its runs), with a percentile interval of the draws
and a two-sided p-value for "no difference": the share of draws whose difference lies at least as
far from the observed one as the observed one lies from zero (draws centred on the observed
difference stand for the null), counted as ``(k + 1) / (draws + 1)`` so it is never 0.

Scores come from the task's own metric through the kernel, so F1/EM-type metrics count as they
do in ``metrics.json``. Where the metric gives per-example values whose mean is its total
(accuracy, CMRC's F1 and EM), draws are a few vector operations; otherwise (macro F1) the metric
is run again on each draw, and fewer draws are taken by default. The examples are rebuilt from
the records' ``gold``: the runs' data need not be read again.

The resampling unit is the example, or the record's ``group`` where every run's records of the split
name theirs (the passage C3's, CMRC's, DRCD's or CHID's questions share; a record without one stands
alone, as in ``metrics.json``'s intervals): questions of one
passage are not independent, so a draw takes whole groups, each with all its examples. Runs made
before records had groups resample examples, as before.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Hashable, Sequence
from pathlib import Path
from typing import Any

from clue_core.plugin import (
    CLASSIFICATION,
    MULTIPLE_CHOICE,
    SPAN,
    ClassificationExample,
    ClueError,
    MetricResult,
    MultipleChoiceExample,
    Prediction,
    Progress,
    Registry,
    SpanExample,
    read_run,
    resolve,
)

#: Draws when each draw is a vector operation, and when the metric runs again on every draw.
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


class Side:
    """One side of the comparison: its runs' predictions on one split, aligned by example id."""

    def __init__(self, runs: Sequence[Path], split: str = "dev") -> None:
        self.paths = [Path(p) for p in runs]
        self.records = [read_run(p) for p in self.paths]
        self.split = split
        for path, record in zip(self.paths, self.records):
            check_split(path, record, split)
        self.task = self.records[0].metrics.task
        self.metric = self.records[0].metrics.primary_metric
        self.answers = [{str(r.id): r for r in record.predictions(split)} for record in self.records]

    def check_alike(self, other: Side | None = None) -> None:
        """Every run of both sides: one task, one primary metric, the same examples with the same gold."""
        everyone = [*zip(self.paths, self.records, self.answers)]
        if other is not None:
            everyone += [*zip(other.paths, other.records, other.answers)]
        split = self.split
        first_path, first, first_answers = everyone[0]
        for path, record, answers in everyone[1:]:
            if record.metrics.task != first.metrics.task:
                raise ClueError(f"{path} is a run of {record.metrics.task} and {first_path} one of "
                                f"{first.metrics.task}; a bootstrap compares runs of one task")
            hint = _other_split(split, record, first)
            if set(answers) != set(first_answers):
                only = sorted(set(answers) ^ set(first_answers))[0]
                raise ClueError(f"{path} and {first_path} scored different {split} examples ({len(answers)} and "
                                f"{len(first_answers)}; id {only!r} is in one only); compare runs on the same "
                                f"examples{hint}")
            wrong = next((i for i in first_answers if answers[i].gold != first_answers[i].gold), None)
            if wrong is not None:
                raise ClueError(f"{path} and {first_path} have different gold answers for {split} id {wrong!r}; "
                                f"they were not run on the same data{hint}")


def _other_split(split: str, *records: Any) -> str:
    """``" (both scored test_public: --split test_public)"`` where runs differ on dev but share a scored split
    (DataCLUE's users change dev; test_public is the split they share), else ``""``."""
    shared = [s for s in scored_splits(records[0]) if s != split and all(s in scored_splits(r) for r in records)]
    return f" (both scored {', '.join(shared)}: --split {shared[0]})" if split == "dev" and shared else ""


def scored_splits(record: Any) -> list[str]:
    """The splits of a run that have gold to score and a predictions file: dev and its scored splits."""
    return [s for s in ("dev", *(record.metrics.scored_splits or ())) if record.has_predictions(s)]


def check_split(path: Path, record: Any, split: str) -> None:
    """One line when ``split`` is not a scored split the run predicted, naming the ones it has."""
    have = scored_splits(record)
    if split not in have:
        raise ClueError(f"{path} has no scored {split} predictions (its scored splits: {', '.join(have) or 'none'}); "
                        "give --split one of them")


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

def _metric(kernel: Registry, task: Any, name: str) -> tuple[Any, dict[str, Any]]:
    """The compute function of the task's metric that produces ``name``, and its setting defaults."""
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


def unit_members(groups: Sequence[Hashable] | None, size: int) -> list[list[int]]:
    """The positions each resampling unit holds, in first-seen order: one example each, or a group's."""
    if groups is None:
        return [[i] for i in range(size)]
    members: dict[Hashable, list[int]] = {}
    for position, group in enumerate(groups):
        members.setdefault(group, []).append(position)
    return list(members.values())


def compare(kernel: Registry, runs_a: Sequence[Path], runs_b: Sequence[Path], *, samples: int | None = None,
            seed: int = 0, confidence: float = CONFIDENCE, split: str = "dev") -> dict[str, Any]:
    """The paired bootstrap of side A against side B on ``split`` (see the module's docstring)."""
    import numpy as np

    a, b = Side(runs_a, split), Side(runs_b, split)
    a.check_alike(b)
    task = kernel.task(a.task)
    if task.kind not in (CLASSIFICATION, MULTIPLE_CHOICE, SPAN):
        raise ClueError(f"{task.name}: {task.kind} predictions cannot be re-scored from their records")
    compute, kwargs = _metric(kernel, task, a.metric)
    order = list(a.answers[0])
    if not order:
        raise ClueError(f"{a.paths[0]}: no {split} predictions to compare")
    groups = groups_of([*a.answers, *b.answers], order, [r.prediction_file(split) for r in (*a.records, *b.records)])
    examples = [_example(task.kind, a.answers[0][i]) for i in order]

    built: dict[int, list[Prediction]] = {}  # each run's predictions in ``order``, made once (a record's fields
    # are read through checks: making them again on each of a thousand draws was most of the time)

    def predictions(answers: dict[str, Any], index: Sequence[int]) -> list[Prediction]:
        if id(answers) not in built:
            built[id(answers)] = [Prediction(id=r.id, value=r.prediction, scores=tuple(r.scores) if r.scores is not
                                             None else None) for r in (answers[i] for i in order)]
        every = built[id(answers)]
        return [every[i] for i in index]

    everything = range(len(order))
    scored = [[_totals(compute(examples, predictions(answers, everything), **kwargs)) for answers in side.answers]
              for side in (a, b)]
    per_run = [[totals.get(a.metric) for totals, _ in side] for side in scored]
    if any(value is None for side in per_run for value in side):
        raise ClueError(f"{task.name}: {a.metric} is undefined on these {split} predictions (no gold?)")
    observed = statistics.fmean(per_run[0]) - statistics.fmean(per_run[1])
    values = [[per_example.get(a.metric) for _, per_example in side] for side in scored]
    fast = all(v is not None and len(v) == len(order) for side in values for v in side) and all(
        _is_mean(v, total) for side, totals in zip(values, per_run) for v, total in zip(side, totals))
    draws_wanted = samples or (FAST_SAMPLES if fast else SLOW_SAMPLES)
    rng = np.random.default_rng(seed)
    if fast:
        labelled = [i for i, v in enumerate(values[0][0]) if v is not None]
        vectors = [np.mean([[run[i] for i in labelled] for run in side], axis=0) for side in values]
        gap = vectors[0] - vectors[1]
        check_units(len(labelled) if groups is None else len({groups[i] for i in labelled}), split)
        if groups is None:
            draws = np.concatenate([gap[rng.integers(0, len(labelled), (size, len(labelled)))].mean(axis=1)
                                    for size in _chunks(draws_wanted, 200_000 // max(len(labelled), 1) + 1)])
        else:  # a draw's difference: the summed gaps of its drawn groups over their examples
            units = unit_members([groups[i] for i in labelled], len(labelled))
            sums = np.array([gap[m].sum() for m in units])
            counts = np.array([float(len(m)) for m in units])
            draws = np.concatenate([sums[drawn].sum(axis=1) / counts[drawn].sum(axis=1)
                                    for drawn in (rng.integers(0, len(units), (size, len(units)))
                                                  for size in _chunks(draws_wanted, 200_000 // len(units) + 1))])
    else:
        units = unit_members(groups, len(order))
        check_units(len(units), split)
        draws = np.empty(draws_wanted)
        # each draw scores every run again (seconds to minutes in all): a bar, or a line every ~15 s in a log
        with Progress(draws_wanted, f"bootstrap: {task.name} {a.metric}", "draws") as progress:
            for k in range(draws_wanted):
                drawn_units = rng.integers(0, len(units), len(units))
                index = [i for u in drawn_units for i in units[u]] if groups is not None else drawn_units
                drawn = [examples[i] for i in index]
                sides = [statistics.fmean(_totals(compute(drawn, predictions(answers, index), **kwargs))[0][a.metric]
                                          for answers in side.answers) for side in (a, b)]
                draws[k] = sides[0] - sides[1]
                progress.update()
    tail = (1.0 - confidence) / 2
    far = int(np.sum(np.abs(draws - observed) >= abs(observed) - 1e-12))
    clustered = {"unit": "group", "groups": len(set(groups))} if groups is not None else {"unit": "example"}
    return {"task": task.name, "metric": a.metric, "split": split,
            **{name: {"runs": [str(p) for p in side.paths], "score": statistics.fmean(scores)}
               for name, side, scores in (("a", a, per_run[0]), ("b", b, per_run[1]))},
            "difference": observed, "low": float(np.quantile(draws, tail)), "high": float(np.quantile(draws, 1 - tail)),
            "p_value": (far + 1) / (draws_wanted + 1), "examples": len(order), **clustered,
            "samples": draws_wanted, "seed": seed,
            "confidence": confidence, "method": "per-example values" if fast else "metric re-run on each draw"}


def _is_mean(values: Sequence[float | None], total: float) -> bool:
    present = [v for v in values if v is not None]
    return bool(present) and math.isclose(statistics.fmean(present), total, rel_tol=1e-9, abs_tol=1e-6)


def _chunks(total: int, size: int) -> list[int]:
    return [min(size, total - start) for start in range(0, total, size)]
