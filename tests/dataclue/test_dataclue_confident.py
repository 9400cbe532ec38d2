"""Confident learning on given probability matrices: thresholds, suspects, ranking (exact)."""

from __future__ import annotations

import pytest

from clue_tasks_dataclue.confident import normalised, precision_recall, suspects, thresholds
from clue_tasks_dataclue.dupes import exact_groups, grams, near_pairs

ROWS = [
    [0.9, 0.1, 0.0],   # 0 labelled 0: confident, fine
    [0.8, 0.2, 0.0],   # 1 labelled 0
    [0.2, 0.7, 0.1],   # 2 labelled 0 but looks like 1 -> suspect (margin 0.5)
    [0.1, 0.8, 0.1],   # 3 labelled 1
    [0.2, 0.6, 0.2],   # 4 labelled 1
    [0.7, 0.3, 0.0],   # 5 labelled 1 but looks like 0 -> suspect (margin 0.4)
    [0.0, 0.1, 0.9],   # 6 labelled 2
    [0.4, 0.2, 0.4],   # 7 labelled 2: p_2 0.4 < t_2 0.65, p_0 0.4 < t_0 0.633.. -> not a suspect
]
GIVEN = [0, 0, 0, 1, 1, 1, 2, 2]


def test_thresholds_are_the_mean_self_confidence_per_class() -> None:
    t = thresholds(ROWS, GIVEN, 4)
    assert t[:3] == [pytest.approx((0.9 + 0.8 + 0.2) / 3), pytest.approx((0.8 + 0.6 + 0.3) / 3),
                     pytest.approx((0.9 + 0.4) / 2)]
    assert t[3] is None  # no example labelled 3: no threshold, never suggested


def test_suspects_ranked_by_margin() -> None:
    found = suspects(ROWS, GIVEN, 3)
    assert [(s.index, s.given, s.suggested) for s in found] == [(2, 0, 1), (5, 1, 0)]
    assert [s.margin for s in found] == [pytest.approx(0.5), pytest.approx(0.4)]


def test_a_label_at_its_own_threshold_is_not_suspect() -> None:
    assert suspects([[0.5, 0.5], [0.5, 0.5]], [0, 1], 2) == []


def test_ties_go_to_the_earlier_example_and_the_lower_class() -> None:
    rows = [[0.9, 0.05, 0.05], [0.9, 0.05, 0.05], [0.1, 0.45, 0.45], [0.1, 0.45, 0.45]]
    found = suspects([*rows, [0.2, 0.4, 0.4], [0.2, 0.4, 0.4]], [0, 0, 0, 0, 1, 2], 3)
    assert [(s.index, s.suggested) for s in found] == [(2, 1), (3, 1)]


def test_scores_become_probabilities() -> None:
    assert normalised([2.0, 2.0]) == [0.5, 0.5]
    assert sum(normalised([-1.0, -2.0, -3.0])) == pytest.approx(1.0)
    assert normalised([0.0, 0.0]) == [0.5, 0.5]


def test_precision_recall() -> None:
    assert precision_recall([1, 2, 3, 4], [2, 4, 6]) == (0.5, pytest.approx(2 / 3))


def test_exact_and_near_duplicates_against_a_full_scan() -> None:
    import itertools
    import random

    rng = random.Random(3)
    keys = ["".join(rng.choice("abcdef") for _ in range(rng.randint(2, 9))) for _ in range(300)]
    keys += [keys[0], keys[5] + "x"]
    assert [0, 300] in exact_groups(keys)
    for threshold in (0.5, 0.8, 1.0):
        want = []
        for i, j in itertools.combinations(range(len(keys)), 2):
            a, b = grams(keys[i], 3), grams(keys[j], 3)
            if keys[i] != keys[j] and len(a & b) / len(a | b) >= threshold:
                want.append((i, j))
        assert sorted((i, j) for i, j, _ in near_pairs(keys, threshold)) == want
