"""Online Elo over the per-question games, averaged over seeded orders, and SuperCLUE's points.

**Elo** plays the games of :mod:`clue_tasks_superclue.compare.ratings` (every pair of models on
every question both have points on; win 1, tie ½, loss 0) one at a time: each model starts at
1000, and after a game of i against j with score S for i,

    E = 1 / (1 + 10^((Rⱼ − Rᵢ)/400)),   Rᵢ += K·(S − E),   Rⱼ −= K·(S − E).

The result depends on the order of the games, which questions do not have, so the games are
played in ``orders`` seeded shuffles and the final ratings averaged (LMSYS's arena did the
same for its online Elo). K is 4 by default: with hundreds of games per pair a chess K of 32
makes the last few games decide. The sum of ratings is kept, so their mean stays 1000, the
centre of the Bradley–Terry scale too; Elo is an order-free fit's rough online cousin, kept
because SuperCLUE and arena boards publish it.

**Points** are SuperCLUE's league points against the reference model: per question, a win is 3,
a tie 1 and a loss 0, by the same ±tie-margin rule as ``vs_reference``; a model's ``points`` is
the sum, out of 3 × the questions both have points on.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from clue_tasks_superclue.win_tie_loss import by_points

#: Elo's start and defaults (K per game, how many shuffled orders are averaged).
START = 1000.0
K = 4.0
ORDERS = 100
POINTS = {"win": 3, "tie": 1, "loss": 0}


def elo(models: Sequence[str], games: Sequence[tuple[int, int, float]], k: float, orders: int,
        seed: int) -> dict[str, float]:
    """Each model's Elo rating: the mean over ``orders`` seeded shuffles of ``games`` ``(i, j, score of i)``."""
    rng = random.Random(f"elo/{seed}")
    totals = [0.0] * len(models)
    played = list(games)
    for _ in range(orders):
        rng.shuffle(played)
        rating = [START] * len(models)
        for i, j, score in played:
            change = k * (score - 1.0 / (1.0 + 10.0 ** ((rating[j] - rating[i]) / 400.0)))
            rating[i] += change
            rating[j] -= change
        totals = [t + r for t, r in zip(totals, rating)]
    return {name: (totals[m] / orders if orders else START) for m, name in enumerate(models)}


def points(model: Sequence[float | None], reference: Sequence[float | None], margin: float) -> tuple[int, int]:
    """SuperCLUE points of a model against the reference (win 3, tie 1, loss 0) and the questions counted."""
    verdicts = [v for v in (by_points(a, b, margin) for a, b in zip(model, reference)) if v is not None]
    return sum(POINTS[v] for v in verdicts), len(verdicts)
