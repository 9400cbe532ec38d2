"""Agreement coefficients on the textbook examples they are taught with, and reproducible bootstrap intervals."""

from __future__ import annotations

import pytest

from clue_tasks_superclue.agreement import (
    bootstrap_interval,
    category_table,
    fleiss_kappa,
    krippendorff_alpha,
    nominal_distance,
    position_consistency,
    quantile,
    share_interval,
)

N = None
#: Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C: 4 observers, 12 units,
#: missing values. Published: alpha nominal 0.743, ordinal 0.815, interval 0.849, ratio 0.797.
KRIPPENDORFF_2011 = {
    "A": [1, 2, 3, 3, 2, 1, 4, 1, 2, N, N, N],
    "B": [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, N, 3],
    "C": [N, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, N],
    "D": [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, N],
}
#: The worked example of Fleiss' kappa (10 subjects, 14 raters, 5 categories; the Wikipedia article
#: "Fleiss' kappa"): P-bar 0.378, P-bar-e 0.213, kappa 0.210.
FLEISS_10x14 = [
    [0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7],
]


def units() -> list[tuple]:
    return list(zip(*KRIPPENDORFF_2011.values()))


def test_krippendorffs_alpha_matches_the_published_values() -> None:
    assert round(krippendorff_alpha(units()), 3) == 0.849              # interval (the default)
    assert round(krippendorff_alpha(units(), nominal_distance), 3) == 0.743


def test_krippendorffs_two_coder_binary_example() -> None:
    """Krippendorff (2011), section A: two coders, ten units, nominal: alpha 0.095."""
    a = [0, 1, 0, 0, 0, 0, 0, 0, 1, 0]
    b = [1, 1, 1, 0, 0, 1, 0, 0, 0, 0]
    assert round(krippendorff_alpha(zip(a, b), nominal_distance), 3) == 0.095


def test_alpha_is_1_for_perfect_agreement_and_undefined_without_variation() -> None:
    assert krippendorff_alpha([(3, 3), (7, 7, 7), (1, None)]) == 1.0
    assert krippendorff_alpha([(5, 5), (5, 5)]) is None          # D_e = 0
    assert krippendorff_alpha([(5, None), (7,)]) is None          # nothing pairable
    assert krippendorff_alpha([]) is None


def test_alpha_interval_is_lower_when_judges_disagree_by_more() -> None:
    close = krippendorff_alpha([(8, 7), (3, 4), (6, 6), (9, 9)])
    far = krippendorff_alpha([(8, 3), (3, 8), (6, 6), (9, 9)])
    assert far < close < 1.0


def test_fleiss_kappa_matches_the_worked_example() -> None:
    assert round(fleiss_kappa(FLEISS_10x14), 3) == 0.210


def test_fleiss_kappa_edges() -> None:
    assert fleiss_kappa([[3, 0], [0, 3]]) == 1.0
    assert fleiss_kappa([[3, 0], [3, 0]]) is None                # every rating in one category
    assert fleiss_kappa([]) is None
    with pytest.raises(ValueError, match="same number"):
        fleiss_kappa([[2, 1], [1, 1]])
    assert category_table([["a", "b", "b"], ["c", "c", "c"]], ["a", "b", "c"]) == [[1, 2, 0], [0, 0, 3]]
    with pytest.raises(ValueError, match="not among the categories"):
        category_table([["z"]], ["a"])


def test_position_consistency() -> None:
    pairs = [("model", "model"), ("model", "reference"), ("tie", "tie"), ("reference", "reference"), (None, "model")]
    assert position_consistency(pairs) == 0.75
    assert position_consistency([(None, None)]) is None


def test_quantiles_interpolate_as_numpy_does() -> None:
    assert quantile([1, 2, 3, 4], 0.5) == 2.5
    assert quantile([0, 10], 0.025) == 0.25
    assert quantile([4], 0.975) == 4


def test_a_bootstrap_interval_is_reproducible_for_a_seed() -> None:
    flags = [True] * 42 + [False] * 18                            # 70 %
    assert share_interval(flags, seed=7) == [58.33, 81.67]        # random.Random is the same everywhere
    values = [i * 1.7 % 10 for i in range(30)]

    def mean(sample: list[float]) -> float:
        return sum(sample) / len(sample)

    first = bootstrap_interval(values, mean, seed=7)
    assert first == bootstrap_interval(values, mean, seed=7) != bootstrap_interval(values, mean, seed=8)
    assert first[0] < mean(values) < first[1]
    assert bootstrap_interval([True] * 5, lambda s: 100.0 * sum(s) / len(s)) == (100.0, 100.0)
    assert share_interval([]) is None


def test_a_bootstrap_leaves_out_resamples_where_the_statistic_is_undefined() -> None:
    ratings = [[2, 0], [0, 2], [2, 0], [1, 1]]
    found = bootstrap_interval(ratings, fleiss_kappa, seed=1, resamples=500)
    assert found is not None and -1.0 <= found[0] <= found[1] <= 1.0
    assert bootstrap_interval([[2, 0]], fleiss_kappa) is None    # every resample one category


def test_the_sheets_figures_get_intervals_reproducible_for_a_seed() -> None:
    from clue_tasks_superclue.agreement import sheet_agreement

    rows = [(9, "优秀"), (8, "良好"), (6, "及格"), (3, "不及格"), (7, "良好"), (2, "不及格"), (10, "优秀"),
            (8, "及格"), (5, "良好"), (None, "优秀")]
    found = sheet_agreement(rows, seed=0)
    assert found == sheet_agreement(rows, seed=0)
    assert found["band_agreement"] == 77.78                        # 7 of the 9 rows with a judge grade
    low, high = found["acceptable_interval"]                       # acceptable_share: 7 of 10 rows
    assert low <= 70.0 <= high
    assert found["band_alpha_interval"][0] <= found["band_alpha"] <= found["band_alpha_interval"][1]
    assert sheet_agreement([(None, "优秀")]) == {"acceptable_interval": [100.0, 100.0]}
