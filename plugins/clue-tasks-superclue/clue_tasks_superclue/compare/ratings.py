"""Bradley–Terry ratings of the compared models, fitted exactly, with seeded bootstrap intervals.

Why pure Python: the plugin depends on clue-core alone (scipy only for ``--human``, numpy only
with the report), and a comparison holds a handful of models: the fit is a Newton iteration on
an M×M system, cheap at any size a leaderboard has.

**Games.** Every question on which two models both have points is one game between them,
decided by the comparison's one rule, :func:`clue_tasks_superclue.win_tie_loss.by_points`
(points differing by more than the tie margin on the 0–10 scale; a verifiable pass is 10 and a
fail 0, so pass beats fail and equal outcomes tie). A win is 1 to the winner, a tie ½ to each.

**Model.** P(i beats j) = σ(θᵢ − θⱼ), σ the logistic function; θ is fitted by maximum likelihood
(Newton's method with step halving; the log-likelihood is concave). The rating is
``1000 + 400·log10(e)·θ``, θ centred on the models' mean: **the mean rating is 1000**, and a
difference of D points means odds of 10^(D/400) to 1 (two models alone: D = 400·log10(w/l)).

**A model that wins everything.** The MLE exists exactly when no group of models never wins
nor ties against the rest (Zermelo 1929, Ford 1957: the "won something against" graph is
strongly connected); otherwise it diverges. Then, and only then, each model is given one
virtual tie against a fixed anchor of θ = 0 (a weak prior, Hunter 2004 §6), which keeps every
rating finite; ``prior`` says so. Where the MLE exists the fit is exact, without any prior.

**Intervals.** Questions are resampled with replacement (all of a question's games travel
together, as they share one question), the model refitted, and the 2.5th and 97.5th
percentiles of each model's rating taken (linear interpolation), seeded, so reproducible.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from operator import mul

from clue_tasks_superclue.win_tie_loss import by_points

#: The Elo-like scale: rating = CENTRE + SCALE·log10(strength), strengths' geometric mean 1.
SCALE = 400.0
CENTRE = 1000.0
#: Newton stops when no θ moves by more than this (natural-log units, ~1e-7 rating points).
TOLERANCE = 1e-10
MAX_STEPS = 200
#: The bootstrap's two-sided interval.
INTERVAL = 95
SHARE = {"win": 1.0, "tie": 0.5, "loss": 0.0}


@dataclass(frozen=True)
class Games:
    """Every pair of models' per-question games, one column per pair (questions in a fixed order).

    ``share[p][q]`` is what model ``pairs[p][0]`` scored against ``pairs[p][1]`` on question ``q``
    (1, ½, 0; 0 when they did not both have points), ``met[p][q]`` 1 when they did.
    """

    models: tuple[str, ...]
    pairs: tuple[tuple[int, int], ...]
    share: tuple[tuple[float, ...], ...]
    met: tuple[tuple[int, ...], ...]
    questions: int

    def count(self) -> int:
        """How many games there are (pairs × questions both scored)."""
        return sum(sum(column) for column in self.met)

    def games(self) -> list[tuple[int, int, float]]:
        """``(i, j, score of i)`` for every game, question by question (the order Elo shuffles)."""
        return [(i, j, self.share[p][q]) for q in range(self.questions)
                for p, (i, j) in enumerate(self.pairs) if self.met[p][q]]

    def wins(self, weights: Sequence[int] | None = None) -> list[list[float]]:
        """``W[i][j]``: what i scored against j, each question counted ``weights[q]`` times (default once)."""
        size = len(self.models)
        table = [[0.0] * size for _ in range(size)]
        for p, (i, j) in enumerate(self.pairs):
            if weights is None:
                scored, met = sum(self.share[p]), sum(self.met[p])
            else:
                scored, met = sum(map(mul, weights, self.share[p])), sum(map(mul, weights, self.met[p]))
            table[i][j], table[j][i] = scored, met - scored
        return table


def games(points: dict[str, Sequence[float | None]], margin: float) -> Games:
    """The games of models (name → points per question, one question order for all, 0–10 or None)."""
    models = tuple(points)
    columns = [points[name] for name in models]
    questions = len(columns[0]) if columns else 0
    pairs, shares, mets = [], [], []
    for i in range(len(models)):
        for j in range(i + 1, len(models)):
            verdicts = [by_points(a, b, margin) for a, b in zip(columns[i], columns[j])]
            pairs.append((i, j))
            shares.append(tuple(0.0 if v is None else SHARE[v] for v in verdicts))
            mets.append(tuple(0 if v is None else 1 for v in verdicts))
    return Games(models, tuple(pairs), tuple(shares), tuple(mets), questions)


def mle_exists(wins: Sequence[Sequence[float]]) -> bool:
    """Whether every model reaches every other through "scored something against" (strong connectivity)."""
    size = len(wins)

    def reached(forward: bool) -> int:
        seen, todo = {0}, [0]
        while todo:
            i = todo.pop()
            for j in range(size):
                if j not in seen and (wins[i][j] if forward else wins[j][i]) > 0:
                    seen.add(j)
                    todo.append(j)
        return len(seen)

    return size > 0 and reached(True) == size and reached(False) == size


def _log_sigmoid(x: float) -> float:
    return -math.log1p(math.exp(-x)) if x >= 0 else x - math.log1p(math.exp(x))


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x)) if x >= 0 else math.exp(x) / (1.0 + math.exp(x))


def _solve(matrix: list[list[float]], vector: list[float]) -> list[float]:
    """``matrix · x = vector`` by Gaussian elimination with partial pivoting (matrix positive definite)."""
    size = len(vector)
    rows = [[*matrix[r], vector[r]] for r in range(size)]
    for col in range(size):
        pivot = max(range(col, size), key=lambda r: abs(rows[r][col]))
        rows[col], rows[pivot] = rows[pivot], rows[col]
        for r in range(col + 1, size):
            factor = rows[r][col] / rows[col][col]
            if factor:
                for c in range(col, size + 1):
                    rows[r][c] -= factor * rows[col][c]
    result = [0.0] * size
    for r in range(size - 1, -1, -1):
        result[r] = (rows[r][size] - sum(rows[r][c] * result[c] for c in range(r + 1, size))) / rows[r][r]
    return result


def _with_anchor(wins: Sequence[Sequence[float]]) -> list[list[float]]:
    """The table with one more player, the anchor, and one virtual tie of every model against it."""
    size = len(wins)
    return [[*row, 0.5] for row in wins] + [[0.5] * size + [0.0]]


def fit_theta(wins: Sequence[Sequence[float]]) -> tuple[list[float], bool]:
    """θ per model (natural log strengths, centred on their mean) and whether the prior was needed."""
    prior = not mle_exists(wins)
    table = _with_anchor(wins) if prior else [list(row) for row in wins]
    players = len(table)
    free = players - 1   # the last player is held at θ = 0: the anchor, or (no prior) the last model
    games_between = [[table[i][j] + table[j][i] for j in range(players)] for i in range(players)]
    theta = [0.0] * players

    def likelihood(values: Sequence[float]) -> float:
        return sum(table[i][j] * _log_sigmoid(values[i] - values[j])
                   for i in range(players) for j in range(players) if table[i][j])

    current = likelihood(theta)
    for _ in range(MAX_STEPS):
        gradient = [0.0] * free
        information = [[0.0] * free for _ in range(free)]
        for i in range(free):
            for j in range(players):
                n = games_between[i][j]
                if i == j or not n:
                    continue
                p = _sigmoid(theta[i] - theta[j])
                gradient[i] += table[i][j] - n * p
                information[i][i] += n * p * (1 - p)
                if j < free:
                    information[i][j] -= n * p * (1 - p)
        step = _solve(information, gradient)
        size = 1.0
        while True:
            trial = [t + size * s for t, s in zip(theta[:free], step)] + theta[free:]
            value = likelihood(trial)
            if value >= current - 1e-12 or size < 1e-6:
                break
            size /= 2
        theta, current = trial, value
        if max(map(abs, step), default=0.0) * size < TOLERANCE:
            break
    models = theta[:len(wins)]
    mean = sum(models) / len(models)
    return [t - mean for t in models], prior


def ratings_of(theta: Sequence[float]) -> list[float]:
    """θ on the Elo-like scale: 1000 + 400·log10(e^θ)."""
    return [CENTRE + SCALE * t / math.log(10) for t in theta]


def percentile(values: Sequence[float], share: float) -> float:
    """The ``share`` (0–1) quantile of ``values``, interpolated linearly between order statistics."""
    ordered = sorted(values)
    position = share * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


@dataclass(frozen=True)
class Fitted:
    """A Bradley–Terry fit: ratings per model, their intervals, and whether the point fit used the prior."""

    ratings: dict[str, float]
    intervals: dict[str, tuple[float, float]]
    prior: bool
    rounds: int


def bradley_terry(found: Games, rounds: int, seed: int) -> Fitted:
    """The point fit on every game, and the ``rounds`` bootstrap refits over questions (seeded)."""
    theta, prior = fit_theta(found.wins())
    point = ratings_of(theta)
    rng = random.Random(f"bradley-terry/{seed}")
    samples: list[list[float]] = [[] for _ in found.models]
    indices = range(found.questions)
    for _ in range(rounds):
        drawn = Counter(rng.choices(indices, k=found.questions))
        weights = [drawn.get(q, 0) for q in indices]
        for model, value in enumerate(ratings_of(fit_theta(found.wins(weights))[0])):
            samples[model].append(value)
    tail = (100 - INTERVAL) / 200
    intervals = {name: ((percentile(samples[m], tail), percentile(samples[m], 1 - tail)) if rounds else
                        (point[m], point[m])) for m, name in enumerate(found.models)}
    return Fitted(dict(zip(found.models, point)), intervals, prior, rounds)
