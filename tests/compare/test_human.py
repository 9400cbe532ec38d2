"""Agreement with a human ranking: Pearson and Spearman against hand-computed values, p-values, strict files."""

from __future__ import annotations

import json
import math
import sys

import pytest

from clue_tasks_superclue.compare.human import pearson, ranks
from tests.compare.fixtures import read_comparison, write_run

#: Totals 80, 70, 60, 50 (one question each); the human scores tie the middle two.
TOTALS = {"m1": 8.0, "m2": 7.0, "m3": 6.0, "m4": 5.0}


@pytest.fixture
def four(tmp_path):
    return [write_run(tmp_path / name, name, [("q1", "计算", points)]) for name, points in TOTALS.items()]


def _run(compare, runs, tmp_path, human, *extra):
    return compare(*runs[1:], "--reference", runs[0], "-o", tmp_path / "out", "--human", human, *extra)


def test_pearson_and_spearman_by_hand(compare, four, tmp_path) -> None:
    human = tmp_path / "elo.json"
    human.write_text(json.dumps({"m1": 1200, "m2": 1100, "m3": 1100, "m4": 1000, "other": 900}), encoding="utf-8")
    result = _run(compare, four, tmp_path, human)
    assert result.exit_code == 0, result.output
    ranking = read_comparison(tmp_path / "out")["human_ranking"]
    # totals centred: 15, 5, -5, -15; human centred: 100, 0, 0, -100 -> r = 3000 / sqrt(500 * 20000)
    assert ranking["pearson"] == pytest.approx(3000 / math.sqrt(500 * 20000), abs=1e-4)
    # ranks 4, 3, 2, 1 against 4, 2.5, 2.5, 1 -> rho = 4.5 / sqrt(5 * 4.5) = 3 / sqrt(10)
    assert ranking["spearman"] == pytest.approx(3 / math.sqrt(10), abs=1e-4)
    assert ranking["n"] == 4 and ranking["file"] == str(human)
    assert ranking["models"] == {"m1": 1200, "m2": 1100, "m3": 1100, "m4": 1000}
    assert "other has a human score but is not among the compared models" in result.stderr
    assert "human ranking (4 models): Pearson 0.949" in result.stdout


def test_known_p_value_with_three_models(compare, tmp_path) -> None:
    """n = 3, r = 0.5: t = r·sqrt(1 / (1 - r²)) with 1 degree of freedom (Cauchy), p = 1 - (2/π)·atan(t) = 2/3."""
    runs = [write_run(tmp_path / n, n, [("q1", "计算", p)]) for n, p in (("m1", 1.0), ("m2", 2.0), ("m3", 3.0))]
    human = tmp_path / "human.csv"
    human.write_text("model,score\nm1,1\nm2,3\nm3,2\n", encoding="utf-8")
    assert _run(compare, runs, tmp_path, human).exit_code == 0
    ranking = read_comparison(tmp_path / "out")["human_ranking"]
    assert ranking["pearson"] == pytest.approx(0.5) and ranking["spearman"] == pytest.approx(0.5)
    assert ranking["pearson_p"] == pytest.approx(2 / 3, abs=1e-3)
    assert ranking["spearman_p"] == pytest.approx(2 / 3, abs=1e-3)


def test_ranks_share_ties() -> None:
    assert ranks([10, 20, 20, 5, 20]) == [2.0, 4.0, 4.0, 1.0, 4.0]
    assert pearson([1, 2, 3], [2, 4, 6]) == pytest.approx(1.0)
    assert pearson([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("h.csv", "name,elo\nm1,1\n", "h.csv:1: expected the header 'model,score'"),
        ("h.csv", "model,score\nm1,1\nm2,abc\n", "h.csv:3: column 2 (score): expected a number, got 'abc'"),
        ("h.csv", "model,score\nm1,1\nm1,2\n", "h.csv:3: column 1 (model): 'm1' is listed twice"),
        ("h.csv", "model,score\nm1,1,2\n", "h.csv:2: expected 2 columns (model, score), got 3"),
        ("h.csv", "model,score\nm1,nan\n", "column 2 (score): expected a finite number"),
        ("h.csv", "", "h.csv: empty"),
        ("h.csv", "model,score\n" + "x" * 200_000 + ",1\n", "h.csv:2: not a CSV row (field larger than field limit"),
        ("h.json", "[1, 2]", "h.json: expected a JSON object"),
        ("h.json", '{"m1": "x"}', "h.json: field 'm1': expected a number"),
        ("h.json", '{"m1": true}', "h.json: field 'm1': expected a finite number"),
        ("h.json", "{", "h.json: invalid JSON"),
        ("h.txt", "m1 1", "h.txt: expected a .json or .csv file"),
        ("h.csv", "model,score\nm1,1\nm2,2\n", "2 model(s) both compared and in the human ranking; a correlation "
                                               "needs at least 3"),
        ("h.csv", "model,score\nm1,5\nm2,5\nm3,5\n", "the human scores are all equal"),
    ],
)
def test_strict_human_files(compare, four, tmp_path, name, content, message) -> None:
    human = tmp_path / name
    human.write_text(content, encoding="utf-8")
    result = _run(compare, four, tmp_path, human)
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and message in result.stderr
    assert not (tmp_path / "out" / "comparison.json").exists()


def test_without_scipy_one_line(compare, four, tmp_path, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "scipy", None)
    human = tmp_path / "h.csv"
    human.write_text("model,score\nm1,4\nm2,3\nm3,2\nm4,1\n", encoding="utf-8")
    result = _run(compare, four, tmp_path, human)
    assert result.exit_code == 2
    assert result.stderr == ("error: --human needs scipy for the p-values: "
                             "pip install './plugins/clue-tasks-superclue[compare]'\n")
