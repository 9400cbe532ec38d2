"""Judge agreement in compare: a panel's judges with each other (α, κ, position consistency, mean grades per
model in comparison.json) and with people (the sheet's figures with seeded intervals), checked on read and
shown side by side in the report."""

from __future__ import annotations

import csv
import io
import json
from statistics import fmean

import pytest

from clue_core.plugin import ClueError
from clue_tasks_superclue import agreement, panel
from clue_tasks_superclue.compare.comparison_file import load_comparison
from clue_tasks_superclue.compare.sheet import COLUMNS
from tests.compare.conftest import superclue_kernel
from tests.compare.fixtures import read_comparison, write_run

JUDGES = ("judge-a", "judge-b", "judge-c")
DIMS = ("计算", "计算", "逻辑推理", "逻辑推理", "知识百科", "知识百科", "角色扮演", "角色扮演")
#: Each question's three grades (None: that judge's judgment did not parse).
GRADES = {
    "ref": [(8, 7, 9), (6, 6, 5), (9, 9, 8), (4, 5, 3), (7, 8, 7), (10, 9, 9), (5, 4, 6), (7, 7, 7)],
    "a": [(9, 8, 9), (5, 7, 6), (8, 8, 8), (3, 3, 5), (6, 6, 7), (9, 10, 10), (4, 6, 5), (8, 7, None)],
}


def _winners(i: int, j: int) -> tuple[str, str]:
    """Judge j's winners on question i, the model's answer first, then second."""
    return ("model" if (i + j) % 3 else "reference"), ("model" if (i + j) % 4 else "tie")


def _record(i: int, grades: tuple, pairwise: bool) -> dict:
    parsed = [float(g) for g in grades if g is not None]
    points = fmean(parsed)
    judges = [{"judge": j, "model": name, "score": g, "band": None if g is None else panel.band_of(g),
               "reasons": "…", "output": "…", "parsed": g is not None, "repaired": False}
              for j, (name, g) in enumerate(zip(JUDGES, grades))]
    scoring = {"dimension": DIMS[i], "category": "理科" if i < 4 else "文科", "method": "judge", "points": points,
               "judge": {"grade": points, "band": panel.band_of(points), "aggregate": "mean", "graded_by": len(parsed),
                         "panel": 3, "reasons": "…", "parsed": True, "prompt": "…"},
               "judges": judges}
    if pairwise:
        orders = [[{"model_first": True, "winner": _winners(i, j)[0], "prompt": f"A{i}"},
                   {"model_first": False, "winner": _winners(i, j)[1], "prompt": f"B{i}"}] for j in range(3)]
        verdict, flat, each = panel.pairwise_record(JUDGES, orders, "mean")
        scoring["pairwise"] = {"verdict": verdict, "orders": flat, "judges": each, "reference_answer": "…"}
    return {"id": f"q{i}", "prediction": f"答{i}", "raw": {"prompts": [f"问题{i}"], "answers": [f"答{i}"]},
            "scoring": scoring}


@pytest.fixture
def runs(tmp_path):
    settings = {"judge": ",".join(JUDGES)}
    return [write_run(tmp_path / name, name, [], settings=settings,
                      records=[_record(i, g, name != "ref") for i, g in enumerate(GRADES[name])])
            for name in ("ref", "a")]


@pytest.fixture
def compared(compare, runs, tmp_path):
    result = compare(runs[1], "--reference", runs[0], "-o", tmp_path / "out")
    assert result.exit_code == 0, result.output
    return result, tmp_path / "out"


def _expected(name: str) -> dict:
    """α, κ, position consistency and mean grades straight from agreement.py on the hand-written grades."""
    grades = GRADES[name]
    bands = [[panel.band_of(g) for g in row] for row in grades if None not in row]
    out = {"alpha": agreement.krippendorff_alpha(grades),
           "kappa": agreement.fleiss_kappa(agreement.category_table(bands, [b for b, _ in panel.BANDS]))}
    if name != "ref":
        out["position_consistency"] = 100 * agreement.position_consistency(
            [_winners(i, j) for i in range(len(grades)) for j in range(3)])
    out["mean_grade"] = {f"judge.{j} {judge}": fmean(row[j] for row in grades if row[j] is not None)
                         for j, judge in enumerate(JUDGES)}
    return out


def test_the_panels_agreement_is_agreement_pys(compared) -> None:
    result, out = compared
    document = read_comparison(out)
    for model in document["models"]:
        found, expected = model["judges"], _expected(model["name"])
        assert found["panel"] == list(JUDGES) and found["aggregate"] == "mean" and found["questions"] == 8
        for key in ("alpha", "kappa", "position_consistency"):
            assert (key in found) == (key in expected)
            if key in expected:
                assert found[key] == pytest.approx(expected[key], abs=1e-4)
        assert found["mean_grade"] == pytest.approx(expected["mean_grade"], abs=1e-4)
        assert found["graded"] == {"judge.0 judge-a": 8, "judge.1 judge-b": 8,
                                   "judge.2 judge-c": 8 if model["name"] == "ref" else 7}
    a = document["models"][1]["judges"]
    assert f"judges of a (3, 8 questions graded by two or more): α {a['alpha']:.3f}, κ {a['kappa']:.3f}, " \
           f"position consistency {a['position_consistency']:.1f}%; mean grade judge.0 judge-a" in result.stdout
    loaded = load_comparison(out / "comparison.json")
    assert loaded["warnings"] == [] and loaded["models"][1]["judges"]["alpha"] == a["alpha"]


def test_a_single_judge_has_no_panel_block(compare, tmp_path) -> None:
    ref = write_run(tmp_path / "ref", "ref", [("q1", "计算", 8.0), ("q2", "计算", 6.0)])
    a = write_run(tmp_path / "a", "a", [("q1", "计算", 7.0), ("q2", "计算", 9.0)])
    assert compare(a, "--reference", ref, "-o", tmp_path / "out").exit_code == 0
    assert all("judges" not in m for m in read_comparison(tmp_path / "out")["models"])


def _edited(out, edit) -> ClueError:
    """comparison.json with ``edit`` applied to it, read back: the error it gives."""
    path = out / "comparison.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    edit(data)
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(ClueError) as caught:
        load_comparison(path)
    return caught.value


def _judges(key, value):
    return lambda data: data["models"][1]["judges"].__setitem__(key, value)


def _sheet(key, value, model=None):
    def edit(data):
        data["judge_agreement"] = {"file": "sheet.csv", "graded": 2, "ungraded": 0,
                                   "by_grade": {"优秀": 1, "良好": 0, "及格": 1, "不及格": 0},
                                   "acceptable_share": 100.0,
                                   "by_model": {"a": {"graded": 2, "acceptable_share": 100.0}}}
        (data["judge_agreement"]["by_model"]["a"] if model else data["judge_agreement"])[key] = value
    return edit


@pytest.mark.parametrize(
    ("edit", "field", "message"),
    [
        (_judges("alpha", 1.5), "models[1].judges.alpha", "expected a number from -1 to 1, got 1.5"),
        (_judges("kappa", "high"), "models[1].judges.kappa", "expected a number from -1 to 1"),
        (_judges("position_consistency", 101), "models[1].judges.position_consistency", "from 0 to 100"),
        (_judges("panel", ["judge-a"]), "models[1].judges.panel", "a panel has two judges or more, got 1"),
        (_judges("mean_grade", {"judge.3 judge-d": 5}), "models[1].judges.mean_grade.judge.3 judge-d",
         "not one of the panel's judges"),
        (_judges("mean_grade", {"judge.0 judge-a": 11}), "models[1].judges.mean_grade.judge.0 judge-a",
         "from 0 to 10"),
        (_judges("questions", -1), "models[1].judges.questions", "expected a count"),
        (_sheet("acceptable_interval", [90, 80]), "judge_agreement.acceptable_interval",
         "its low end 90 is above its high end 80"),
        (_sheet("band_agreement_interval", [10]), "judge_agreement.band_agreement_interval", "expected [low, high]"),
        (_sheet("band_agreement", 120), "judge_agreement.band_agreement", "from 0 to 100, got 120"),
        (_sheet("band_alpha", -2), "judge_agreement.band_alpha", "from -1 to 1, got -2"),
        (_sheet("band_alpha_interval", [-0.5, 1.5]), "judge_agreement.band_alpha_interval", "from -1 to 1"),
        (_sheet("band_alpha_interval", [0.5, 0.1], model="a"), "judge_agreement.by_model.a.band_alpha_interval",
         "above its high end"),
        (_sheet("graded", 1, model="a"), "judge_agreement.by_model", "do not add up to judge_agreement.graded"),
        (lambda data: _sheet("graded", 2)(data) or data["judge_agreement"]["by_model"].update(
            {"nobody": {"graded": 0, "acceptable_share": 0}}), "judge_agreement.by_model.nobody",
         "not one of the compared models"),
    ],
)
def test_the_fields_are_checked_on_read(compared, edit, field, message) -> None:
    error = str(_edited(compared[1], edit))
    assert "\n" not in error and "comparison.json: field '" + field + "'" in error and message in error, error


def test_an_older_file_without_them_still_reads(compared) -> None:
    path = compared[1] / "comparison.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    for model in data["models"]:
        del model["judges"]
    data["judge_agreement"] = {"file": "sheet.csv", "graded": 2, "ungraded": 0,
                               "by_grade": {"优秀": 1, "良好": 0, "及格": 1, "不及格": 0}, "acceptable_share": 100.0}
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    loaded = load_comparison(path)
    assert loaded["warnings"] == [] and loaded["judge_agreement"]["acceptable_share"] == 100.0
    assert "by_model" not in loaded["judge_agreement"] and all("judges" not in m for m in loaded["models"])


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda judges: judges[1].__setitem__("score", 11), "scoring.judges[1].score"),
        (lambda judges: judges[2].__setitem__("band", "满分"), "scoring.judges[2].band"),
        (lambda judges: judges[0].__setitem__("judge", 2), "scoring.judges[0].judge"),
        (lambda judges: judges[1].__setitem__("model", "judge-x"), "scoring.judges"),
    ],
)
def test_a_bad_judges_record_is_one_line(compare, tmp_path, change, field) -> None:
    records = [_record(i, g, False) for i, g in enumerate(GRADES["a"])]
    change(records[3]["scoring"]["judges"])
    ref = write_run(tmp_path / "ref", "ref", [], records=[_record(i, g, False) for i, g in enumerate(GRADES["ref"])])
    a = write_run(tmp_path / "a", "a", [], records=records)
    result = compare(a, "--reference", ref, "-o", tmp_path / "out")
    assert result.exit_code == 2 and result.stderr.count("\n") == 1, result.stderr
    assert "dev.jsonl:4 (q3): field '" + field in result.stderr, result.stderr


def _graded_sheet(compare, runs, tmp_path):
    """Export the sheet and fill it in: each row's band from the row's position."""
    sheet = tmp_path / "sheet.csv"
    assert compare(runs[1], "--reference", runs[0], "-o", tmp_path / "first", "--export-sheet", sheet).exit_code == 0
    rows = list(csv.reader(io.StringIO(sheet.read_text(encoding="utf-8-sig"), newline="")))
    for index, row in enumerate(rows[1:]):
        row[-1] = ("优秀", "良好", "良好", "及格", "不及格")[index % 5]
    with sheet.open("w", encoding="utf-8-sig", newline="") as handle:
        csv.writer(handle).writerows(rows)
    return sheet, rows


def test_a_sheet_round_trip_is_reproducible_for_a_seed(compare, runs, tmp_path) -> None:
    sheet, rows = _graded_sheet(compare, runs, tmp_path)
    found = []
    for name, seed in (("one", 3), ("two", 3), ("three", 4)):
        result = compare(runs[1], "--reference", runs[0], "-o", tmp_path / name, "--import-sheet", sheet,
                         "--seed", seed)
        assert result.exit_code == 0, result.output
        found.append(read_comparison(tmp_path / name)["judge_agreement"])
    assert found[0] == found[1]
    rated = [(float(row[COLUMNS.index("judge_grade")]), row[-1]) for row in rows[1:]]
    expected = agreement.sheet_agreement(rated, seed=3)
    assert {key: found[0][key] for key in expected} == expected
    assert set(expected) == {"acceptable_interval", "band_agreement", "band_agreement_interval", "band_alpha",
                             "band_alpha_interval"}
    assert found[2]["band_alpha"] == found[0]["band_alpha"]  # the seed moves the intervals only
    assert found[2]["band_alpha_interval"] != found[0]["band_alpha_interval"]
    low, high = found[0]["acceptable_interval"]
    assert low <= found[0]["acceptable_share"] <= high
    assert sorted(found[0]["by_model"]) == ["a", "ref"]
    assert load_comparison(tmp_path / "one" / "comparison.json")["judge_agreement"] == {
        key: value for key, value in found[0].items() if key != "ungraded"}


def test_the_report_shows_both_side_by_side(run_cli, compare, runs, tmp_path, monkeypatch) -> None:
    from clue_report import hooks as report_hooks

    sheet, _ = _graded_sheet(compare, runs, tmp_path)
    out = tmp_path / "cmp"
    result = compare(runs[1], "--reference", runs[0], "-o", out, "--import-sheet", sheet)
    assert result.exit_code == 0, result.output
    document = read_comparison(out)
    people = document["judge_agreement"]
    low, high = people["acceptable_interval"]
    assert (f"judge agreement: {people['acceptable_share']:.1f}% of {people['graded']} judgments graded 及格 or "
            f"better by people (95% CI {low:.1f}–{high:.1f}); judge grade in the person's band") in result.stdout
    kernel = superclue_kernel()
    kernel.register(report_hooks, "clue-report", distribution="clue-report")
    monkeypatch.setenv("CLUE_REPORT_FONT", "none")
    report = run_cli("report", out, "-o", tmp_path / "report", kernel=kernel)
    assert report.exit_code == 0, report.output
    page = (tmp_path / "report" / "index.html").read_text(encoding="utf-8")
    assert "Judge agreement: judges with each other, and with people</h4>" in page
    a, mine = document["models"][1]["judges"], people["by_model"]["a"]
    row = page[page.index("<td>a</td><td>judge-a, judge-b, judge-c</td>"):]
    row = row[:row.index("</tr>")]
    assert f"{a['alpha']:.3f}" in row and f"{a['kappa']:.3f}" in row and f"{a['position_consistency']:.1f}%" in row
    assert f"judge.0 judge-a {a['mean_grade']['judge.0 judge-a']:.2f}<br>judge.1 judge-b" in row
    band_low, band_high = mine["band_agreement_interval"]
    assert f"{mine['band_agreement']:.1f}% (95% CI {band_low:.1f}–{band_high:.1f})" in row
    assert f"{mine['acceptable_share']:.1f}% (95% CI " in row and f"{mine['band_alpha']:.3f} (95% CI " in row
    assert "all models (the sheet)" in page and f"graded 及格 or better (95% CI {low:.1f}–{high:.1f})" in page
    markdown = (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
    assert "| a | judge-a, judge-b, judge-c | " in markdown and "judge.0 judge-a" in markdown
    assert f"{mine['band_agreement']:.1f}% (95% CI {band_low:.1f}–{band_high:.1f})" in markdown
