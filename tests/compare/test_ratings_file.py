"""The ratings in comparison.json: written by compare (judged and pass/fail runs), checked on reading, shown by
the report; runs of different tasks are one error line."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from clue_core.errors import ClueError
from clue_tasks_superclue.compare.comparison_file import load_comparison
from tests.compare.conftest import superclue_kernel
from tests.compare.fixtures import read_comparison, write_run

#: Points per question of three judged models (four questions: ref 2 wins, 1 tie, 1 loss against b …).
JUDGED = {"ref": (8.0, 6.0, 5.0, 7.0), "a": (9.0, 6.2, 3.0, 9.0), "b": (4.0, 6.0, 7.0, 5.0)}
CPIF_TASK = "superclue-cpif"


def _judged(tmp_path: Path) -> dict[str, Path]:
    dims = ("计算", "逻辑推理", "知识百科", "角色扮演")
    return {name: write_run(tmp_path / name, name, [(f"q{i}", dims[i], p) for i, p in enumerate(points)])
            for name, points in JUDGED.items()}


def _cpif_record(qid: str, passed: bool, checker_error: bool = False) -> dict:
    return {"id": qid, "prediction": f"{qid} 的回答",
            "scoring": {"passed": passed, "reason": "" if passed else "第3句开头不对", "checker_error": checker_error}}


def _cpif(tmp_path: Path, name: str, passes: str, errors: str = "") -> Path:
    """A superclue-cpif run folder: ``passes`` is one letter per prompt, P a pass, F a fail."""
    records = [_cpif_record(f"p{i}", mark == "P", str(i) in errors) for i, mark in enumerate(passes)]
    return write_run(tmp_path / name, name, [], task=CPIF_TASK, records=records)


def test_compare_writes_the_three_ratings(compare, tmp_path) -> None:
    runs = _judged(tmp_path)
    result = compare(runs["a"], runs["b"], "--reference", runs["ref"], "-o", tmp_path / "out", "--bootstrap", 50)
    assert result.exit_code == 0, result.output
    document = read_comparison(tmp_path / "out")
    assert document["task"] == "superclue"
    assert set(document["bradley_terry"]) == {"ref", "a", "b"}
    for fitted in document["bradley_terry"].values():
        assert fitted["ci_low"] <= fitted["rating"] <= fitted["ci_high"]
    ratings = [fitted["rating"] for fitted in document["bradley_terry"].values()]
    assert sum(ratings) / 3 == pytest.approx(1000, abs=0.01)
    assert document["bradley_terry_bootstrap"] == 50 and document["bradley_terry_prior"] is False
    assert document["elo_k"] == 4.0 and document["elo_orders"] == 100 and document["ratings_seed"] == 0
    assert document["ratings_games"] == 3 * 4 and "400" in document["ratings_definition"]
    by_name = {m["name"]: m for m in document["models"]}
    # a against ref: win (9 vs 8), tie (6.2 vs 6), loss (3 vs 5), win (9 vs 7)
    assert (by_name["a"]["points"], by_name["a"]["points_max"]) == (7, 12)
    assert (by_name["b"]["points"], by_name["b"]["points_max"]) == (0 + 1 + 3 + 0, 12)
    assert "points" not in by_name["ref"]
    assert "Bradley-Terry" in result.stdout and "95% interval" in result.stdout and "7/12" in result.stdout
    again = tmp_path / "again"
    assert compare(runs["a"], runs["b"], "--reference", runs["ref"], "-o", again, "--bootstrap", 50).exit_code == 0
    assert read_comparison(again)["bradley_terry"] == document["bradley_terry"]  # seeded: reproducible
    assert read_comparison(again)["elo"] == document["elo"]


def test_rating_options(compare, tmp_path) -> None:
    runs = _judged(tmp_path)
    out = tmp_path / "out"
    args = (runs["a"], "--reference", runs["ref"], "-o", out, "--bootstrap", 0, "--elo-orders", 3, "--elo-k", 16)
    assert compare(*args).exit_code == 0
    document = read_comparison(out)
    assert document["elo_k"] == 16.0 and document["elo_orders"] == 3 and document["bradley_terry_bootstrap"] == 0
    fitted = document["bradley_terry"]["a"]
    assert fitted["ci_low"] == fitted["rating"] == fitted["ci_high"]
    result = compare(runs["a"], "--reference", runs["ref"], "-o", tmp_path / "bad", "--elo-k", 0)
    assert result.exit_code == 2


def test_compare_over_pass_fail_runs(compare, tmp_path) -> None:
    ref = _cpif(tmp_path, "ref", "PPFFPF")
    strong = _cpif(tmp_path, "strong", "PPPFPP", errors="3")
    weak = _cpif(tmp_path, "weak", "FPFFFF")
    result = compare(strong, weak, "--reference", ref, "-o", tmp_path / "out", "--bootstrap", 20)
    assert result.exit_code == 0, result.output
    assert "strong: the checker failed on 1 of 6 questions" in result.stderr
    document = read_comparison(tmp_path / "out")
    assert document["task"] == CPIF_TASK
    by_name = {m["name"]: m for m in document["models"]}
    assert by_name["strong"]["total"] == pytest.approx(500 / 6, abs=1e-3)   # 5 of 6 pass: the task's accuracy
    assert by_name["strong"]["dimensions"] == {"精确指令遵循": pytest.approx(500 / 6, abs=1e-3)}
    # strong against ref: p2 and p5 pass where ref fails (wins), the rest equal (ties): 2·3 + 4·1
    assert (by_name["strong"]["points"], by_name["strong"]["points_max"]) == (10, 18)
    assert by_name["strong"]["vs_reference"]["overall"]["win"] == pytest.approx(33.33)
    # weak against ref: p0 and p4 are losses, p1 p2 p3 p5 ties
    assert by_name["weak"]["points"] == 4
    bt = document["bradley_terry"]
    assert bt["strong"]["rating"] > bt["ref"]["rating"] > bt["weak"]["rating"]
    # weak never beats strong (p1 both pass: a tie), so the MLE still exists
    assert document["bradley_terry_prior"] is False
    assert load_comparison(tmp_path / "out" / "comparison.json")["warnings"] == []


def test_pass_fail_records_are_checked(compare, tmp_path) -> None:
    ref = _cpif(tmp_path, "ref", "PF")
    bad = write_run(tmp_path / "bad", "bad", [], task=CPIF_TASK,
                    records=[_cpif_record("p0", True), {"id": "p1", "prediction": "x", "scoring": {"passed": "yes"}}])
    result = compare(bad, "--reference", ref, "-o", tmp_path / "out")
    assert result.exit_code == 2 and result.stderr.count("\n") == 1
    assert "dev.jsonl:2 (p1): field 'scoring.passed': expected true or false, got 'yes'" in result.stderr
    odd = write_run(tmp_path / "odd", "odd", [], task=CPIF_TASK,
                    records=[_cpif_record("p0", True), {"id": "p1", "prediction": "x",
                                                        "scoring": {"passed": False, "dimension": "格式"}}])
    result = compare(odd, "--reference", ref, "-o", tmp_path / "out")
    assert "field 'scoring.category': missing: '格式' is not a SuperCLUE dimension" in result.stderr


def test_runs_of_different_tasks_are_one_error_line(compare, tmp_path) -> None:
    judged = _judged(tmp_path)
    cpif = _cpif(tmp_path, "cpif", "PPFF")
    result = compare(cpif, "--reference", judged["ref"], "-o", tmp_path / "out")
    assert result.exit_code == 2 and result.stderr.count("\n") == 1, result.output
    assert (f"{cpif / CPIF_TASK / 'metrics.json'}: field 'task': a run of 'superclue-cpif', not 'superclue' like "
            f"the reference run {judged['ref'] / 'superclue'}") in result.stderr
    assert not (tmp_path / "out").exists()


def test_task_picks_the_folder_in_a_run_of_several_tasks(compare, tmp_path) -> None:
    both = tmp_path / "both"
    write_run(both, "a", [("q1", "计算", 8.0), ("q2", "逻辑推理", 6.0)])
    write_run(both, "a", [], task=CPIF_TASK, records=[_cpif_record("p0", True), _cpif_record("p1", True)])
    ref = _cpif(tmp_path, "ref", "PF")
    result = compare(both, "--reference", ref, "-o", tmp_path / "out")
    assert result.exit_code == 2 and f"{both}: holds runs of superclue, superclue-cpif; --task" in result.stderr
    assert compare(both, "--reference", ref, "-o", tmp_path / "out", "--task", CPIF_TASK).exit_code == 0
    assert read_comparison(tmp_path / "out")["task"] == CPIF_TASK
    # --task names a folder; a task folder named directly must then be that task's run
    result = compare(ref / CPIF_TASK, "--reference", both, "-o", tmp_path / "other", "--task", "superclue")
    assert "field 'task': a run of 'superclue-cpif', not 'superclue' (--task names the task" in result.stderr


def _written(compare, tmp_path) -> Path:
    runs = _judged(tmp_path)
    assert compare(runs["a"], runs["b"], "--reference", runs["ref"], "-o", tmp_path / "out",
                   "--bootstrap", 20).exit_code == 0
    return tmp_path / "out" / "comparison.json"


def test_the_reader_keeps_the_ratings(compare, tmp_path) -> None:
    loaded = load_comparison(_written(compare, tmp_path))
    assert loaded["warnings"] == []
    assert set(loaded["bradley_terry"]) == {"ref", "a", "b"} and set(loaded["elo"]) == {"ref", "a", "b"}
    assert loaded["elo_k"] == 4.0 and loaded["bradley_terry_bootstrap"] == 20 and loaded["ratings_games"] == 12
    assert {m["name"]: m.get("points") for m in loaded["models"]} == {"ref": None, "a": 7.0, "b": 4.0}


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d["bradley_terry"]["a"].update(rating="high"), "field 'bradley_terry.a.rating': expected a finite"),
        (lambda d: d["bradley_terry"]["a"].pop("ci_low"), "field 'bradley_terry.a.ci_low'"),
        (lambda d: d["bradley_terry"]["a"].update(ci_low=2000.0), "field 'bradley_terry.a.ci_low': is above ci_high"),
        (lambda d: d["bradley_terry"].update(zed={"rating": 1, "ci_low": 0, "ci_high": 2}),
         "field 'bradley_terry.zed': not one of the compared models"),
        (lambda d: d.update(bradley_terry=[1, 2]), "field 'bradley_terry': expected an object"),
        (lambda d: d["elo"].update(a=math.inf), "field 'elo.a': expected a finite number"),
        (lambda d: d["elo"].update(zed=1000), "field 'elo.zed'"),
        (lambda d: d.update(elo_k=0), "field 'elo_k': expected a number above 0"),
        (lambda d: d.update(elo_orders=-1), "field 'elo_orders'"),
        (lambda d: d.update(bradley_terry_bootstrap=1.5), "field 'bradley_terry_bootstrap'"),
        (lambda d: d.update(bradley_terry_prior="no"), "field 'bradley_terry_prior': expected true or false"),
        (lambda d: d.update(ratings_seed="0"), "field 'ratings_seed'"),
        (lambda d: d["models"][1].update(points=-3), "field 'models[1].points': expected a number ≥ 0"),
        (lambda d: d["models"][1].update(points=13), "field 'models[1].points': 13 is more than points_max 12"),
        (lambda d: d["models"][1].update(points="7"), "field 'models[1].points'"),
    ],
)
def test_bad_rating_fields_are_one_line(compare, tmp_path, edit, message) -> None:
    path = _written(compare, tmp_path)
    data = json.loads(path.read_text(encoding="utf-8"))
    edit(data)
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")  # inf is written as Infinity
    with pytest.raises(ClueError) as error:
        load_comparison(path)
    assert str(error.value).startswith(f"{path}: field ") and "\n" not in str(error.value)
    assert message in str(error.value)


def test_an_older_comparison_without_ratings_still_reads(compare, tmp_path) -> None:
    path = _written(compare, tmp_path)
    data = json.loads(path.read_text(encoding="utf-8"))
    for key in [k for k in data if k.startswith(("bradley_terry", "elo", "ratings_"))] + ["task"]:
        del data[key]
    for model in data["models"]:
        model.pop("points", None)
        model.pop("points_max", None)
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    loaded = load_comparison(path)
    assert loaded["bradley_terry"] is None and loaded["elo"] is None and loaded["warnings"] == []


def test_a_missing_model_is_a_warning(compare, tmp_path) -> None:
    path = _written(compare, tmp_path)
    data = json.loads(path.read_text(encoding="utf-8"))
    del data["elo"]["b"]
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    assert "elo: no rating for b" in load_comparison(path)["warnings"]


def test_the_report_shows_the_ratings_table(run_cli, compare, tmp_path, monkeypatch) -> None:
    from clue_report import hooks as report_hooks

    path = _written(compare, tmp_path)
    document = json.loads(path.read_text(encoding="utf-8"))
    kernel = superclue_kernel()
    kernel.register(report_hooks, "clue-report", distribution="clue-report")
    monkeypatch.setenv("CLUE_REPORT_FONT", "none")
    result = run_cli("report", path.parent, "-o", tmp_path / "report", kernel=kernel)
    assert result.exit_code == 0, result.output
    page = (tmp_path / "report" / "index.html").read_text(encoding="utf-8")
    assert "<h4>Ratings</h4>" in page and "<th>Bradley–Terry (95% interval)</th><th>Elo</th><th>points</th>" in page
    best = max(document["bradley_terry"], key=lambda n: document["bradley_terry"][n]["rating"])
    fitted = document["bradley_terry"][best]
    assert f"<tr><td>{best}</td><td class=\"num\">{fitted['rating']:.2f}<small>{fitted['ci_low']:.1f} – " in page
    assert "<td>7 / 12</td>" in page and "<td>(reference)</td>" in page
    assert "a gap of 400 means odds of 10 to 1" in page and "K = 4, mean of 100 shuffled orders" in page
    markdown = (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
    assert "| model | Bradley–Terry | 95% interval | Elo | points |" in markdown
    assert f"| {best} | {fitted['rating']:.1f} | {fitted['ci_low']:.1f} – {fitted['ci_high']:.1f} |" in markdown
    report = json.loads((tmp_path / "report" / "report.json").read_text(encoding="utf-8"))
    assert report["comparisons"][0]["bradley_terry"] == document["bradley_terry"]
