"""Aggregation, win/tie/loss (the ±margin rule at its boundaries), pairwise rates and maturity, via the CLI."""

from __future__ import annotations

import pytest

from clue_tasks_superclue.compare import scores
from tests.compare.fixtures import read_comparison, write_run

REFERENCE = [("c1", "计算", 8.0), ("c2", "计算", 6.0), ("l1", "逻辑推理", 5.0), ("k1", "知识百科", 9.0),
             ("r1", "角色扮演", 7.0), {"qid": "h1", "dimension": "精确指令遵循", "points": 10, "method": "constraints"},
             ("u1", "知识百科", None)]
# differences from the reference: +0.5 tie, +0.6 win, -0.5 tie, -0.6 loss, unjudged, -10 loss, reference unjudged
MODEL = [{"qid": "c1", "dimension": "计算", "points": 8.5, "pairwise": "win"},
         {"qid": "c2", "dimension": "计算", "points": 6.6, "pairwise": "tie"},
         {"qid": "l1", "dimension": "逻辑推理", "points": 4.5, "pairwise": "loss"},
         {"qid": "k1", "dimension": "知识百科", "points": 8.4, "pairwise": None},
         ("r1", "角色扮演", None),
         {"qid": "h1", "dimension": "精确指令遵循", "points": 0, "method": "constraints"},
         ("u1", "知识百科", 6.0)]


@pytest.fixture
def runs(tmp_path):
    return (write_run(tmp_path / "ref", "参考模型", REFERENCE),
            write_run(tmp_path / "a", "model-a", MODEL, settings={"reference_run": str(tmp_path / "ref")}))


def _models(document):
    return {m["name"]: m for m in document["models"]}


def test_scores_per_dimension_category_and_total(compare, runs, tmp_path) -> None:
    ref, a = runs
    result = compare(a, "--reference", ref, "-o", tmp_path / "out")
    assert result.exit_code == 0, result.output
    document = read_comparison(tmp_path / "out")
    models = _models(document)
    assert [m["name"] for m in document["models"]] == ["参考模型", "model-a"]
    model = models["model-a"]
    # judged questions only: c1 85, c2 66, l1 45, k1 84, h1 0, u1 60 (r1 unjudged)
    assert model["total"] == pytest.approx((85 + 66 + 45 + 84 + 0 + 60) / 6, abs=1e-4)
    assert (model["questions"], model["judged"]) == (7, 6)
    assert model["dimensions"] == pytest.approx({"计算": 75.5, "逻辑推理": 45.0, "知识百科": 72.0, "精确指令遵循": 0.0})
    # a category is the mean of its dimensions' scores (角色扮演 has none for this model)
    assert model["categories"] == pytest.approx({"理科": 60.25, "文科": 72.0, "Hard": 0.0})
    reference = models["参考模型"]
    assert reference["total"] == pytest.approx(75.0)
    assert reference["categories"] == pytest.approx({"理科": 60.0, "文科": 80.0, "Hard": 100.0})
    assert "vs_reference" not in reference
    assert [d["name"] for d in document["dimensions"]] == ["计算", "逻辑推理", "知识百科", "角色扮演", "精确指令遵循"]
    assert document["categories"][0] == {"name": "理科", "name_en": "science", "dimensions": ["计算", "逻辑推理"]}
    assert document["judge"] == "judge-model" and document["tie_margin"] == 0.5
    assert document["quadrant"]["x"]["dimensions"] == ["计算", "逻辑推理", "知识百科"]
    assert document["quadrant"]["y"]["dimensions"] == ["角色扮演"]
    assert "model-a: 1 of 7 questions unjudged" in result.stderr
    assert "参考模型: 1 of 7 questions unjudged" in result.stderr


def test_win_tie_loss_at_the_margin(compare, runs, tmp_path) -> None:
    ref, a = runs
    assert compare(a, "--reference", ref, "-o", tmp_path / "out").exit_code == 0
    versus = _models(read_comparison(tmp_path / "out"))["model-a"]["vs_reference"]
    # decided: c1 +0.5 tie, c2 +0.6 win, l1 -0.5 tie, k1 -0.6 loss, h1 -10 loss; r1 and u1 unjudged on one side
    assert versus["overall"] == {"win": 20.0, "tie": 40.0, "loss": 40.0, "n": 5}
    assert versus["undecided"] == 2
    assert versus["dimensions"]["计算"] == {"win": 50.0, "tie": 50.0, "loss": 0.0, "n": 2}
    assert versus["dimensions"]["逻辑推理"] == {"win": 0.0, "tie": 100.0, "loss": 0.0, "n": 1}
    assert versus["dimensions"]["知识百科"]["loss"] == 100.0
    assert "角色扮演" not in versus["dimensions"]

    assert compare(a, "--reference", ref, "-o", tmp_path / "wide", "--tie-margin", "1").exit_code == 0
    wide = _models(read_comparison(tmp_path / "wide"))["model-a"]["vs_reference"]
    assert wide["overall"] == {"win": 0.0, "tie": 80.0, "loss": 20.0, "n": 5}


def test_pairwise_rates_are_reported_apart(compare, runs, tmp_path) -> None:
    ref, a = runs
    result = compare(a, "--reference", ref, "-o", tmp_path / "out")
    pairwise = _models(read_comparison(tmp_path / "out"))["model-a"]["vs_reference_pairwise"]
    assert pairwise["overall"] == {"win": 33.33, "tie": 33.33, "loss": 33.33, "n": 3}
    assert pairwise["undecided"] == 1  # k1's pairwise judgment failed
    assert pairwise["dimensions"]["计算"] == {"win": 50.0, "tie": 50.0, "loss": 0.0, "n": 2}
    assert pairwise["reference_run"] == str(tmp_path / "ref")
    assert "pairwise verdicts are against" not in result.stderr
    assert "pairwise w/t/l %" in result.stdout and "33.3/33.3/33.3" in result.stdout


def test_pairwise_against_another_run_is_a_warning(compare, tmp_path) -> None:
    ref = write_run(tmp_path / "ref", "ref", REFERENCE)
    a = write_run(tmp_path / "a", "a", MODEL, settings={"reference_run": str(tmp_path / "elsewhere")})
    result = compare(a, "--reference", ref, "-o", tmp_path / "out")
    assert result.exit_code == 0
    assert "a: its pairwise verdicts are against" in result.stderr


def test_screen_table(compare, runs, tmp_path) -> None:
    ref, a = runs
    output = compare(a, ref, "--reference", ref, "-o", tmp_path / "out").stdout
    lines = output.splitlines()
    assert lines[0].split() == ["model", "total", "理科", "文科", "Hard", "judged", "win/tie/loss", "%",
                                "pairwise", "w/t/l", "%"]
    assert lines[2].split()[:2] == ["参考模型", "75.00"] and "(reference)" in lines[2]
    assert lines[3].split()[:6] == ["model-a", "56.67", "60.25", "72.00", "0.00", "6/7"]
    assert "20.0/40.0/40.0" in lines[3]
    assert output.rstrip().endswith(f"wrote {tmp_path / 'out' / 'comparison.json'}")


def _maturity_runs(tmp_path):
    """Three models; 计算 at index 0.8 (high), 逻辑推理 at 0.6 (middle), 知识百科 at 0.58 (low)."""
    points = {"best": (8.0, 10.0, 5.0), "middle": (6.4, 6.0, 2.9), "worst": (4.0, 3.0, 1.0)}
    return [write_run(tmp_path / name, name, [("q1", "计算", p[0]), ("q2", "逻辑推理", p[1]), ("q3", "知识百科", p[2])])
            for name, p in points.items()]


def test_maturity_index_and_bands(compare, tmp_path) -> None:
    best, middle, worst = _maturity_runs(tmp_path)
    assert compare(middle, worst, "--reference", best, "-o", tmp_path / "out").exit_code == 0
    document = read_comparison(tmp_path / "out")
    assert document["maturity"] == [{"dimension": "计算", "index": 0.8, "band": "high"},
                                    {"dimension": "逻辑推理", "index": 0.6, "band": "middle"},
                                    {"dimension": "知识百科", "index": 0.58, "band": "low"}]
    assert "median model's score" in document["maturity_definition"]


def test_maturity_with_an_even_number_of_models_and_a_zero_best() -> None:
    table = {"a": {"计算": 90.0, "安全": 0.0}, "b": {"计算": 80.0, "安全": 0.0}, "c": {"计算": 60.0},
             "d": {"计算": 40.0}}
    result = scores.maturity(table, ["计算", "安全", "代码"])
    assert result == [{"dimension": "计算", "index": round(70 / 90, 4), "band": "middle"},
                      {"dimension": "安全", "index": 0.0, "band": "low"}]


def test_quadrant_axes_hold_only_scored_dimensions(compare, tmp_path) -> None:
    questions = [("q1", "计算", 5.0), ("q2", "代码", None), ("q3", "安全", 7.0)]
    ref = write_run(tmp_path / "ref", "ref", questions)
    a = write_run(tmp_path / "a", "a", questions)
    assert compare(a, "--reference", ref, "-o", tmp_path / "out").exit_code == 0
    quadrant = read_comparison(tmp_path / "out")["quadrant"]
    assert (quadrant["x"]["dimensions"], quadrant["y"]["dimensions"]) == (["计算"], ["安全"])
    only_x = [("q1", "计算", 5.0), ("q2", "安全", None)]
    write_run(tmp_path / "ref2", "ref", only_x)
    write_run(tmp_path / "a2", "a", only_x)
    assert compare(tmp_path / "a2", "--reference", tmp_path / "ref2", "-o", tmp_path / "out2").exit_code == 0
    assert "quadrant" not in read_comparison(tmp_path / "out2")
