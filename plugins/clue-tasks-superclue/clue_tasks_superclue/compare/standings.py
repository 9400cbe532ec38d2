"""The ratings part of ``comparison.json``: Bradley–Terry with intervals, Elo, and SuperCLUE points.

Why three: win/tie/loss only says how each model fares against the reference; the ratings put
every model on one scale from every pair of models' per-question games, Bradley–Terry as the
order-free maximum-likelihood fit (the arena boards' "MLE Elo"), online Elo for the figure boards
publish, and points (win 3, tie 1, loss 0 against the reference) for SuperCLUE's own tally. The
methods are in :mod:`~clue_tasks_superclue.compare.ratings` and :mod:`~clue_tasks_superclue.compare.elo`;
this module only assembles what the file holds, with the parameters beside the numbers so that
a reader can tell what scale and what K they are on.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from clue_tasks_superclue.compare import elo, ratings
from clue_tasks_superclue.compare.runs import Run

#: Bootstrap rounds by default (intervals' percentiles move by well under a rating point past this).
BOOTSTRAP = 1000
RATINGS_DEFINITION = (
    "games: every pair of models on every question both have points on (0-10; a verifiable pass 10, a fail 0), "
    "decided by the tie margin (win 1, tie 1/2 each, loss 0); "
    "bradley_terry: P(i beats j) = 1/(1 + 10^((Rj - Ri)/400)), fitted by maximum likelihood, "
    "the models' mean rating anchored at 1000 (one virtual tie of each model against a fixed anchor "
    "only where the plain MLE diverges: bradley_terry_prior); 95% intervals: percentiles of "
    "bradley_terry_bootstrap refits over questions resampled with replacement; "
    "elo: online updates R += K(S - E) from 1000, averaged over elo_orders seeded shuffles of the games; "
    "points: against the reference, win 3, tie 1, loss 0 per question, out of points_max")


@dataclass(frozen=True)
class RatingOptions:
    """How the ratings are computed: bootstrap rounds, Elo's shuffled orders and its K."""

    bootstrap: int = BOOTSTRAP
    elo_orders: int = elo.ORDERS
    elo_k: float = elo.K


def _points(run: Run, ids: Sequence[str]) -> list[float | None]:
    return [run.questions[qid].points for qid in ids]


def standings(runs: Sequence[Run], reference: Run, margin: float, options: RatingOptions, seed: int,
              warnings: list[str]) -> tuple[dict[str, Any], dict[str, dict[str, int]]]:
    """The top-level rating fields, and each non-reference model's ``points`` and ``points_max``.

    The runs hold the same question ids (the caller checked); the reference's order is the
    order the games are listed in before Elo shuffles them, so the result does not depend on
    the order the runs were given in beyond the models' own.
    """
    ids = list(reference.questions)
    found = ratings.games({run.model: _points(run, ids) for run in runs}, margin)
    played = found.count()
    if not played:
        warnings.append("no two models have points on one question: every rating is 1000")
    fitted = ratings.bradley_terry(found, options.bootstrap, seed)
    board = elo.elo(found.models, found.games(), options.elo_k, options.elo_orders, seed)
    fields: dict[str, Any] = {
        "bradley_terry": {name: {"rating": round(fitted.ratings[name], 2),
                                 "ci_low": round(fitted.intervals[name][0], 2),
                                 "ci_high": round(fitted.intervals[name][1], 2)} for name in found.models},
        "bradley_terry_bootstrap": options.bootstrap,
        "bradley_terry_prior": fitted.prior,
        "elo": {name: round(value, 2) for name, value in board.items()},
        "elo_k": options.elo_k,
        "elo_orders": options.elo_orders,
        "ratings_seed": seed,
        "ratings_games": played,
        "ratings_definition": RATINGS_DEFINITION,
    }
    if fitted.prior and played:
        warnings.append("the Bradley-Terry MLE diverges (some models never win nor tie against the others): "
                        "fitted with one virtual tie of each model against a fixed anchor")
    reference_points = _points(reference, ids)
    points = {}
    for run in runs:
        if run is not reference:
            total, counted = elo.points(_points(run, ids), reference_points, margin)
            points[run.model] = {"points": total, "points_max": 3 * counted}
    return fields, points
