"""Scores, win/tie/loss and maturity from per-question points (the method in docs/report.md).

A question's score is its points × 10 (0-100). A dimension's score is the mean over its
judged questions, a category's the mean of its dimensions' scores, the total the mean over
all judged questions: an unjudged question (points null) counts in no mean, and the counts
say how many there were.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence

from clue_core.compare.runs import VERDICTS, Question, Run
from clue_tasks_superclue.compare.comparison_file import band_of

MATURITY_DEFINITION = ("index = the median model's score on the dimension / the best model's score on it "
                       "(models with a score on the dimension; 0 when the best is 0); "
                       "bands: high ≥ 0.8, middle ≥ 0.6, low below 0.6")


def _mean(values: Iterable[float]) -> float | None:
    values = list(values)
    return statistics.fmean(values) if values else None


def model_scores(run: Run, categories: Mapping[str, Sequence[str]]) -> dict[str, object]:
    """Total, per-dimension and per-category scores of one run (dimensions without a judged question left out)."""
    judged = run.judged
    by_dimension: dict[str, list[float]] = {}
    for question in judged:
        by_dimension.setdefault(question.dimension, []).append(question.score)  # type: ignore[arg-type]
    dimensions = {d: statistics.fmean(scores) for d, scores in by_dimension.items()}
    per_category = {}
    for category, members in categories.items():
        mean = _mean(dimensions[d] for d in members if d in dimensions)
        if mean is not None:
            per_category[category] = mean
    return {"total": _mean(q.score for q in judged), "dimensions": dimensions, "categories": per_category,
            "questions": len(run.questions), "judged": len(judged)}


def outcome(counts: Mapping[str, int]) -> dict[str, float]:
    """Win/tie/loss counts as percentages (2 decimals), with ``n`` the number of questions counted."""
    n = sum(counts[v] for v in VERDICTS)
    return {**{v: round(100 * counts[v] / n, 2) for v in VERDICTS}, "n": n}


def verdict(model: Question, reference: Question, margin: float) -> str | None:
    """The ±margin rule on the 0-10 points; None when either question is unjudged."""
    if model.points is None or reference.points is None:
        return None
    difference = model.points - reference.points
    return "win" if difference > margin else "loss" if difference < -margin else "tie"


def _tally(pairs: Iterable[tuple[str, str | None]], dimensions: Sequence[str]) -> dict[str, object] | None:
    """Overall and per-dimension outcomes of (dimension, verdict) pairs; None when nothing was decided."""
    overall = dict.fromkeys(VERDICTS, 0)
    per = {d: dict.fromkeys(VERDICTS, 0) for d in dimensions}
    undecided = 0
    for dimension, decided in pairs:
        if decided is None:
            undecided += 1
            continue
        overall[decided] += 1
        per[dimension][decided] += 1
    if not sum(overall.values()):
        return None
    return {"overall": outcome(overall),
            "dimensions": {d: outcome(c) for d, c in per.items() if sum(c.values())},
            "undecided": undecided}


def versus_reference(run: Run, reference: Run, margin: float, dimensions: Sequence[str]) -> dict[str, object] | None:
    """Win/tie/loss from grades: every question id of the reference, compared by points."""
    pairs = [(q.dimension, verdict(q, reference.questions[qid], margin)) for qid, q in run.questions.items()]
    return _tally(pairs, dimensions)


def versus_reference_pairwise(run: Run, dimensions: Sequence[str]) -> dict[str, object] | None:
    """Win/tie/loss from the run's own pairwise verdicts (None when the run has none)."""
    pairs = [(q.dimension, q.pairwise) for q in run.questions.values() if q.has_pairwise]
    return _tally(pairs, dimensions) if pairs else None


def maturity(scores: Mapping[str, Mapping[str, float]], dimensions: Sequence[str]) -> list[dict[str, object]]:
    """Per dimension: median of the models' scores over the best one's, and its band."""
    result = []
    for dimension in dimensions:
        values = [s[dimension] for s in scores.values() if dimension in s]
        if not values:
            continue
        best = max(values)
        index = statistics.median(values) / best if best > 0 else 0.0
        result.append({"dimension": dimension, "index": round(index, 4), "band": band_of(round(index, 4))})
    return result
