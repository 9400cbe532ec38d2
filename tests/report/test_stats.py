"""The bootstrap: known cases, the cluster unit, and agreement with a plain-loop reference."""

from __future__ import annotations

import numpy as np
import pytest

from clue_report import stats
from tests.report import reference


def test_constant_values_give_a_point_interval() -> None:
    interval = stats.bootstrap_mean([100.0] * 30)
    assert (interval.low, interval.high) == (100.0, 100.0)
    assert interval.units == 30 and interval.unit == "example" and interval.resamples == stats.RESAMPLES


def test_two_examples_known_distribution() -> None:
    # resample means are 0, 50, 100 with probabilities 1/4, 1/2, 1/4: the 95% interval spans 0..100
    interval = stats.bootstrap_mean([0.0, 100.0], resamples=2000, seed=3)
    assert (interval.low, interval.high) == (0.0, 100.0)


def test_binomial_case_matches_the_normal_approximation() -> None:
    # 200 of 400 right: standard error 2.5 points, so about 50 ± 4.9
    interval = stats.bootstrap_mean([100.0] * 200 + [0.0] * 200, resamples=2000, seed=1)
    assert interval.low == pytest.approx(45.1, abs=1.0)
    assert interval.high == pytest.approx(54.9, abs=1.0)


def test_seeded_reproducible_and_seed_dependent() -> None:
    values = [100.0 * (i % 3 == 0) for i in range(50)]
    assert stats.bootstrap_mean(values, seed=7) == stats.bootstrap_mean(values, seed=7)
    assert stats.bootstrap_mean(values, seed=7) != stats.bootstrap_mean(values, seed=8)


def test_clusters_are_resampled_whole() -> None:
    # two passages of five blanks: all right, all wrong. Per blank the interval is narrow; per
    # passage a resample holds 0, 1 or 2 copies of the right passage: means 0, 50 or 100.
    values = [100.0] * 5 + [0.0] * 5
    groups = ["p1"] * 5 + ["p2"] * 5
    per_blank = stats.bootstrap_mean(values)
    per_passage = stats.bootstrap_mean(values, groups, unit="group")
    assert (per_passage.low, per_passage.high) == (0.0, 100.0)
    assert per_passage.units == 2
    assert per_blank.high - per_blank.low < per_passage.high - per_passage.low


@pytest.mark.parametrize("grouped", [False, True])
def test_mean_matches_the_loop_reference(grouped: bool) -> None:
    rng = np.random.default_rng(0)
    values = list(rng.uniform(0, 100, size=37))
    groups = [f"g{i // 4}" for i in range(37)] if grouped else [None] * 37
    interval = stats.bootstrap_mean(values, groups if grouped else None, resamples=300, seed=5)
    low, high = reference.bootstrap(reference.mean_of(values), groups, 300, 5)
    assert (interval.low, interval.high) == pytest.approx((low, high), abs=1e-9)


def test_macro_f1_matches_the_loop_reference() -> None:
    rng = np.random.default_rng(2)
    gold = [str(v) for v in rng.integers(0, 4, size=40)]
    predicted = [None if i % 9 == 0 else str(v) for i, v in enumerate(rng.integers(0, 5, size=40))]
    interval = stats.bootstrap_macro_f1(gold, predicted, resamples=300, seed=11)
    low, high = reference.bootstrap(reference.macro_f1_of(gold, predicted), [None] * 40, 300, 11)
    assert (interval.low, interval.high) == pytest.approx((low, high), abs=1e-9)


def test_spread_over_seeds() -> None:
    result = stats.spread([70.0, 72.0, 74.0])
    assert result == {"mean": 72.0, "std": 2.0, "n": 3}
    assert stats.spread([70.0])["std"] == 0.0
