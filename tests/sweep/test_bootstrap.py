"""The paired bootstrap: a run against itself, known toy cases, a metric re-run per draw, and refusals."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from clue_core.kernel import Kernel
from clue_core.plugin import api
from clue_sweep.bootstrap import compare


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    """Baseline runs of afqmc and tnews on their samples, and edited copies of the afqmc one."""
    root = tmp_path_factory.mktemp("boot")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CLUE_HOME", str(root / "home"))
        api.run(["afqmc", "tnews"], model="baseline", sample=True, output_dir=root / "runs", echo=None)
    found = {"afqmc": root / "runs" / "afqmc", "tnews": root / "runs" / "tnews"}
    found["perfect"] = edited(found["afqmc"], root / "perfect", lambda r: {**r, "prediction": r["gold"]})
    found["short"] = edited(found["afqmc"], root / "short", lambda r: r, drop=1)
    found["other-gold"] = edited(found["afqmc"], root / "other-gold",
                                 lambda r: {**r, "gold": "1" if r["gold"] == "0" else "0"})
    return found


def edited(run: Path, to: Path, change, drop: int = 0) -> Path:
    """A copy of ``run`` whose dev records are changed (and the last ``drop`` left out)."""
    shutil.copytree(run, to)
    path = to / "predictions" / "dev.jsonl"
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    records = [change(r) for r in records[:len(records) - drop]]
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return to


def correctness(run: Path) -> list[float]:
    records = [json.loads(line) for line in (run / "predictions" / "dev.jsonl").read_text().splitlines()]
    return [100.0 * (r["prediction"] == r["gold"]) for r in records]


def test_a_run_against_itself_differs_by_nothing(runs):
    result = compare(Kernel(), [runs["afqmc"]], [runs["afqmc"]], samples=2000)
    assert result["difference"] == 0 and result["low"] == 0 and result["high"] == 0 and result["p_value"] == 1
    assert result["method"] == "per-example values" and result["examples"] == len(correctness(runs["afqmc"]))


def test_all_right_against_the_baseline(runs):
    """Every dev answer right against a majority-class run: the difference is the baseline's error rate,
    and no draw comes near zero."""
    base = correctness(runs["afqmc"])
    assert 0 < sum(base) < 100 * len(base)  # the baseline is right on some, wrong on others
    result = compare(Kernel(), [runs["perfect"]], [runs["afqmc"]], samples=4000, seed=3)
    assert result["a"]["score"] == 100 and result["b"]["score"] == pytest.approx(sum(base) / len(base))
    assert result["difference"] == pytest.approx(100 - sum(base) / len(base))
    assert 0 < result["low"] < result["difference"] < result["high"] <= 100
    assert result["p_value"] < 0.01
    flipped = compare(Kernel(), [runs["afqmc"]], [runs["perfect"]], samples=4000, seed=3)
    assert flipped["difference"] == -result["difference"] and flipped["low"] == pytest.approx(-result["high"])


def test_the_draws_are_seeded(runs):
    one = compare(Kernel(), [runs["perfect"]], [runs["afqmc"]], samples=500, seed=1)
    assert compare(Kernel(), [runs["perfect"]], [runs["afqmc"]], samples=500, seed=1) == one


def test_a_metric_without_per_example_values_runs_again_on_each_draw(runs, tmp_path, monkeypatch, capsys):
    """macro F1 is no mean of per-example values: each draw is scored by the metric itself, which is slow
    enough to show its progress (it showed none)."""
    monkeypatch.setenv("CLUE_PROGRESS", "lines")
    monkeypatch.setenv("CLUE_PROGRESS_EVERY", "0")
    copies = []
    for name in ("perfect", "afqmc"):
        copy = shutil.copytree(runs[name], tmp_path / name)
        metrics = json.loads((copy / "metrics.json").read_text(encoding="utf-8"))
        metrics.update(primary_metric="macro_f1", primary=metrics["dev"]["macro_f1"])
        (copy / "metrics.json").write_text(json.dumps(metrics), encoding="utf-8")
        copies.append(copy)
    same = compare(Kernel(), [copies[1]], [copies[1]], samples=200)
    assert same["method"] == "metric re-run on each draw" and same["difference"] == 0 and same["p_value"] == 1
    result = compare(Kernel(), [copies[0]], [copies[1]], samples=200)
    majority = json.loads((copies[1] / "metrics.json").read_text())["dev"]["macro_f1"]
    assert result["difference"] == pytest.approx(100 - majority) and result["low"] > 0
    lines = capsys.readouterr().err.splitlines()
    assert "bootstrap: afqmc macro_f1: 1/200 draws" in lines[0] and lines[-1].startswith(
        "bootstrap: afqmc macro_f1: 200/200 draws in ")


def test_runs_of_two_tasks_or_two_example_sets_are_refused_in_one_line(run_cli, runs):
    for other, expected in (("tnews", "a bootstrap compares runs of one task"), ("short", "different dev examples"),
                            ("other-gold", "different gold answers")):
        result = run_cli("bootstrap", runs["afqmc"], runs[other])
        assert result.exit_code == 2, result.output
        assert len(result.output.strip().splitlines()) == 1 and expected in result.output, result.output


def test_the_command_prints_the_difference_interval_and_p_value(run_cli, runs):
    result = run_cli("bootstrap", runs["perfect"], runs["afqmc"], "--samples", "1000", "--seed", "4")
    assert result.exit_code == 0, result.output
    expected = compare(Kernel(), [runs["perfect"]], [runs["afqmc"]], samples=1000, seed=4)
    assert f"A − B = {expected['difference']:+.2f}" in result.output
    assert f"interval {expected['low']:+.2f} to {expected['high']:+.2f}" in result.output
    as_json = json.loads(run_cli("bootstrap", runs["perfect"], runs["afqmc"], "--samples", "1000", "--seed", "4",
                                 "--json").output)
    assert as_json == json.loads(json.dumps(expected))
    two = run_cli("bootstrap", runs["perfect"], runs["afqmc"], "--a", runs["afqmc"], "--samples", "1000", "--json")
    assert json.loads(two.output)["a"]["score"] == pytest.approx((100 + expected["b"]["score"]) / 2)
