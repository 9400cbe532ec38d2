"""Human scores at the ends of the float range: ±1e308 raised an OverflowError traceback (the squares of
the deviations overflow). The correlations do not depend on the scores' scale, so such a legitimately
finite ranking is scaled, exactly, by a power of two and gives the coefficients of the same ranking
written small; a number no float holds (an integer of 400 digits) is one line naming file and field."""

from __future__ import annotations

import json

import pytest

from clue_tasks_superclue.compare.human import pearson
from tests.compare.fixtures import read_comparison, write_run

TOTALS = {"m1": 8.0, "m2": 7.0, "m3": 6.0, "m4": 5.0}


@pytest.fixture
def four(tmp_path):
    return [write_run(tmp_path / name, name, [("q1", "计算", points)]) for name, points in TOTALS.items()]


def _ranking(compare, runs, tmp_path, scores: dict[str, object], name: str):
    human = tmp_path / name
    human.write_text(json.dumps(scores), encoding="utf-8")
    result = compare(*runs[1:], "--reference", runs[0], "-o", tmp_path / name.replace(".", "-"), "--human", human)
    return result, human


@pytest.mark.parametrize("big", [1e308, -1e308, 1.7976931348623157e308])
def test_scores_near_the_float_limit_give_the_coefficients_of_the_same_ranking_written_small(
        compare, four, tmp_path, big: float) -> None:
    small = {"m1": 4.0, "m2": -3.0, "m3": 2.0, "m4": -1.0}
    huge = {name: value / 4 * big for name, value in small.items()}
    result, _ = _ranking(compare, four, tmp_path, huge, "huge.json")
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    reference, _ = _ranking(compare, four, tmp_path, small, "small.json")
    assert reference.exit_code == 0, reference.output
    got = read_comparison(tmp_path / "huge-json")["human_ranking"]
    want = read_comparison(tmp_path / "small-json")["human_ranking"]
    sign = 1 if big > 0 else -1  # a negative factor reverses the ranking: the same coefficients, negated
    assert (got["pearson"], got["spearman"]) == pytest.approx((sign * want["pearson"], sign * want["spearman"]))
    for key in ("pearson_p", "spearman_p", "n"):
        assert got[key] == pytest.approx(want[key]), key
    assert got["models"] == huge  # the file's scores are recorded as given


def test_a_score_no_float_holds_is_one_line_naming_the_field(compare, four, tmp_path) -> None:
    human = tmp_path / "h.json"
    human.write_text('{"m1": 1, "m2": 2, "m3": 1' + "0" * 400 + ', "m4": 4}', encoding="utf-8")
    result = compare(*four[1:], "--reference", four[0], "-o", tmp_path / "out", "--human", human)
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert f"error: {human}: field 'm3': expected a finite number, got an integer of 401 digits" in result.output
    assert not (tmp_path / "out").exists()


def test_pearson_of_huge_values_does_not_overflow() -> None:
    assert pearson([1.0, 2.0, 3.0], [1e308, -1e308, 1.7e308]) == pytest.approx(pearson([1, 2, 3], [1, -1, 1.7]))
    assert pearson([1e-320, 2e-320, 3e-320], [1, 2, 3]) == pytest.approx(1.0)  # subnormals: scaled up, not lost
