"""The ratings' arithmetic: Bradley–Terry on hand-computable cases, its prior and bootstrap, Elo, points."""

from __future__ import annotations

import math

import pytest

from clue_tasks_superclue.compare import elo, ratings


def _fit(points: dict[str, list[float | None]], margin: float = 0.5, rounds: int = 0, seed: int = 0):
    return ratings.bradley_terry(ratings.games(points, margin), rounds, seed)


def test_two_models_differ_by_400_log10_of_their_odds() -> None:
    # a wins 30 questions, b 10: the odds are 3 to 1
    fitted = _fit({"a": [8.0] * 30 + [2.0] * 10, "b": [2.0] * 30 + [8.0] * 10})
    assert fitted.ratings["a"] - fitted.ratings["b"] == pytest.approx(400 * math.log10(3), abs=1e-6)
    assert (fitted.ratings["a"] + fitted.ratings["b"]) / 2 == pytest.approx(1000)  # the mean is anchored
    assert not fitted.prior


def test_ties_are_half_a_win_each() -> None:
    # 2 wins, 2 ties (within the margin), no loss: a scores 3, b 1
    fitted = _fit({"a": [9.0, 9.0, 5.0, 5.2], "b": [3.0, 3.0, 5.0, 5.0]})
    assert fitted.ratings["a"] - fitted.ratings["b"] == pytest.approx(400 * math.log10(3), abs=1e-6)
    assert not fitted.prior  # b tied: it reaches a, so the MLE exists


def test_the_fit_solves_the_likelihood_equations() -> None:
    """Three models, unequal results: at the MLE every model's expected score equals its actual score."""
    wins = [[0, 5, 3], [2, 0, 6], [4, 1, 0]]
    theta, prior = ratings.fit_theta(wins)
    assert not prior and sum(theta) == pytest.approx(0, abs=1e-12)
    for i in range(3):
        expected = sum((wins[i][j] + wins[j][i]) / (1 + math.exp(theta[j] - theta[i])) for j in range(3) if j != i)
        assert expected == pytest.approx(sum(wins[i]), abs=1e-9)


def test_a_model_that_wins_everything_gets_a_finite_rating_from_the_prior() -> None:
    fitted = _fit({"a": [9.0] * 10, "b": [1.0] * 10})
    assert fitted.prior
    gap = fitted.ratings["a"] - fitted.ratings["b"]
    assert math.isfinite(gap) and 400 < gap < 700   # 10 of 10: about 580 points, not infinity
    # one loss in 1000 needs no prior; all 1000 with the prior lands near it, not at a cliff
    close = _fit({"a": [9.0] * 999 + [1.0], "b": [1.0] * 999 + [9.0]})
    sweep = _fit({"a": [9.0] * 1000, "b": [1.0] * 1000})
    assert not close.prior and sweep.prior
    assert abs((sweep.ratings["a"] - sweep.ratings["b"]) - (close.ratings["a"] - close.ratings["b"])) < 200


def test_a_group_that_never_wins_is_enough_to_need_the_prior() -> None:
    # a beats b and c on every question; b and c trade wins
    points = {"a": [9.0] * 6, "b": [5.0, 3.0] * 3, "c": [3.0, 5.0] * 3}
    assert not ratings.mle_exists(ratings.games(points, 0.5).wins())
    fitted = _fit(points)
    assert fitted.prior and fitted.ratings["a"] > fitted.ratings["b"] == pytest.approx(fitted.ratings["c"])


def test_no_games_rate_everyone_1000() -> None:
    fitted = _fit({"a": [5.0, None], "b": [None, 5.0]})
    assert fitted.ratings == {"a": pytest.approx(1000), "b": pytest.approx(1000)}


def test_unjudged_questions_are_no_game() -> None:
    found = ratings.games({"a": [8.0, None, 8.0], "b": [2.0, 2.0, None]}, 0.5)
    assert found.count() == 1 and found.games() == [(0, 1, 1.0)]


def _three(seed: int, rounds: int = 200):
    points = {"a": [7.0, 8.0, 6.0, 9.0, 5.0, 7.0, 8.0, 4.0] * 3, "b": [6.0, 6.0, 7.0, 5.0, 5.0, 8.0, 6.0, 5.0] * 3,
              "c": [5.0, 7.0, 4.0, 6.0, 6.0, 3.0, 5.0, 6.0] * 3}
    return _fit(points, rounds=rounds, seed=seed)


def test_the_bootstrap_is_seeded_and_its_intervals_hold_the_estimate() -> None:
    first, again, other = _three(0), _three(0), _three(1)
    assert first.intervals == again.intervals and first.ratings == again.ratings
    assert first.intervals != other.intervals and first.ratings == other.ratings  # the point fit has no seed
    for name, rating in first.ratings.items():
        low, high = first.intervals[name]
        assert low < rating < high
    assert first.rounds == 200
    assert _three(0, rounds=0).intervals["a"] == (first.ratings["a"], first.ratings["a"])


def test_percentile_interpolates() -> None:
    assert ratings.percentile([4.0, 1.0, 3.0, 2.0], 0.5) == 2.5
    assert ratings.percentile([1.0, 2.0], 0.025) == pytest.approx(1.025)
    assert ratings.percentile([7.0], 0.975) == 7.0


def test_elo_one_game() -> None:
    assert elo.elo(["a", "b"], [(0, 1, 1.0)], 4, 1, 0) == {"a": 1002.0, "b": 998.0}
    assert elo.elo(["a", "b"], [(0, 1, 0.5)], 32, 3, 0) == {"a": 1000.0, "b": 1000.0}


def test_elo_averages_seeded_orders() -> None:
    games = [(0, 1, 1.0), (1, 2, 0.0), (0, 2, 0.5), (0, 1, 0.0), (1, 2, 1.0), (0, 2, 1.0)] * 5
    first = elo.elo(["a", "b", "c"], games, 16, 20, 7)
    assert first == elo.elo(["a", "b", "c"], games, 16, 20, 7)
    assert first != elo.elo(["a", "b", "c"], games, 16, 20, 8)
    assert sum(first.values()) / 3 == pytest.approx(1000)  # every update moves as much up as down
    assert first["a"] > 1000
    assert elo.elo(["a", "b", "c"], games, 16, 1, 7) != first  # one order alone is not the average


def test_points_win_3_tie_1_loss_0() -> None:
    model = [9.0, 5.0, 2.0, 8.0, None, 6.0]
    reference = [5.0, 5.3, 7.0, 7.0, 5.0, None]
    # win (9 vs 5), tie (within 0.5), loss, win (8 vs 7); the unjudged ones count nowhere
    assert elo.points(model, reference, 0.5) == (3 + 1 + 0 + 3, 4)
    assert elo.points(model, reference, 1.0) == (3 + 1 + 0 + 1, 4)  # 8 vs 7 is a tie within 1.0
