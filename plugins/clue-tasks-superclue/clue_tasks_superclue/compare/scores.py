"""Scores, win/tie/loss and maturity of the runs a comparison holds (the method in docs/report.md).

Nothing of the method is restated here: a run's scores come from
:func:`clue_tasks_superclue.aggregate.scores`, the aggregation the task's metric writes into
``metrics.json``, and every verdict from :mod:`clue_tasks_superclue.win_tie_loss`, the rules
the task's pairwise judging uses; this module only tallies them per dimension and adds the
maturity index, which only a comparison of several models has.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence

from clue_tasks_superclue import aggregate, win_tie_loss
from clue_tasks_superclue.compare.comparison_file import band_of
from clue_tasks_superclue.compare.runs import Run
from clue_tasks_superclue.win_tie_loss import VERDICTS

MATURITY_DEFINITION = ("index = the median model's score on the dimension / the best model's score on it "
                       "(models with a score on the dimension; 0 when the best is 0); "
                       "bands: high ≥ 0.8, middle ≥ 0.6, low below 0.6")


def model_scores(run: Run, categories: Mapping[str, Sequence[str]]) -> dict[str, object]:
    """Total, per-dimension and per-category scores of one run (dimensions without a judged question left out).

    Categories come in the comparison's order (``categories``), the values as the metric computes them.
    """
    found = aggregate.scores((q.dimension, q.category, q.points) for q in run.questions.values())
    return {"total": found.total, "dimensions": found.dimensions,
            "categories": {c: found.categories[c] for c in categories if c in found.categories},
            "questions": found.questions, "judged": found.judged}


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
    return {"overall": win_tie_loss.outcome(overall),
            "dimensions": {d: win_tie_loss.outcome(c) for d, c in per.items() if sum(c.values())},
            "undecided": undecided}


def versus_reference(run: Run, reference: Run, margin: float, dimensions: Sequence[str]) -> dict[str, object] | None:
    """Win/tie/loss from grades: every question id of the reference, compared by points."""
    pairs = [(q.dimension, win_tie_loss.by_points(q.points, reference.questions[qid].points, margin))
             for qid, q in run.questions.items()]
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
