"""What compare writes passes ``clue-core report``'s checks, and the page shows the new parts."""

from __future__ import annotations

import csv
import io
import json

import pytest

from clue_tasks_superclue.compare.comparison_file import load_comparison
from tests.compare.conftest import superclue_kernel
from tests.compare.fixtures import read_comparison, write_run

DIMS = ("计算", "逻辑推理", "知识百科", "角色扮演", "工具使用", "精确指令遵循")


def _questions(level: float, verdicts: bool):
    questions = []
    for i, dimension in enumerate(DIMS):
        for k in range(2):
            item = {"qid": f"{i}-{k}", "dimension": dimension, "points": max(0.0, min(10.0, level - i + k))}
            if verdicts:
                item["pairwise"] = ("win", "tie", "loss")[(i + k) % 3]
            questions.append(item)
    return questions


@pytest.fixture
def comparison(compare, tmp_path):
    runs = [write_run(tmp_path / name, name, _questions(level, name != "ref"))
            for name, level in (("ref", 9.0), ("模型甲", 8.0), ("model-b", 6.0), ("model-c", 4.0))]
    human = tmp_path / "human.json"
    human.write_text(json.dumps({"ref": 1250, "模型甲": 1200, "model-b": 1210, "model-c": 1000}), encoding="utf-8")
    sheet = tmp_path / "sheet.csv"
    assert compare(*runs[1:], "--reference", runs[0], "-o", tmp_path / "first", "--export-sheet", sheet).exit_code == 0
    rows = list(csv.reader(io.StringIO(sheet.read_text(encoding="utf-8-sig"), newline="")))
    for index, row in enumerate(rows[1:]):
        row[-1] = ("优秀", "良好", "及格", "不及格")[index % 4]
    with sheet.open("w", encoding="utf-8-sig", newline="") as handle:
        csv.writer(handle).writerows(rows)
    out = tmp_path / "cmp"
    result = compare(*runs[1:], "--reference", runs[0], "-o", out, "--human", human, "--import-sheet", sheet)
    assert result.exit_code == 0, result.output
    return out


def test_the_report_check_accepts_every_field(comparison) -> None:
    loaded = load_comparison(comparison / "comparison.json")
    written = read_comparison(comparison)
    assert loaded["warnings"] == []
    assert loaded["human_ranking"]["n"] == 4 and loaded["judge_agreement"]["graded"] == 48
    assert loaded["judge_agreement"]["acceptable_share"] == 75.0
    assert loaded["maturity_definition"] == written["maturity_definition"]
    by_name = {m["name"]: m for m in loaded["models"]}
    assert by_name["模型甲"]["vs_reference_pairwise"]["overall"] == written["models"][1]["vs_reference_pairwise"][
        "overall"]
    assert all(m["quadrant"]["x"] is not None for m in loaded["models"])


def test_report_renders_the_comparison(run_cli, comparison, tmp_path, monkeypatch) -> None:
    from clue_report import hooks as report_hooks  # the report is the clue-report plugin's command

    kernel = superclue_kernel()  # the SuperCLUE section is this plugin's (clue_report_sections)
    kernel.register(report_hooks, "clue-report", distribution="clue-report")
    monkeypatch.setenv("CLUE_REPORT_FONT", "none")
    result = run_cli("report", comparison, "-o", tmp_path / "report", kernel=kernel)
    assert result.exit_code == 0, result.output
    page = (tmp_path / "report" / "index.html").read_text(encoding="utf-8")
    assert "Win / tie / loss (%) against ref</h4>" in page
    assert "Win / tie / loss (%) against ref (pairwise verdicts)</h4>" in page
    assert "median model&#x27;s score on the dimension" in page
    assert "Agreement with a human ranking" in page and "Pearson r = " in page
    assert "Judge agreement with people" in page and "75.0% graded 及格 or better" in page
    report = json.loads((tmp_path / "report" / "report.json").read_text(encoding="utf-8"))
    assert report["comparisons"][0]["judge_agreement"]["by_grade"] == {"优秀": 12, "良好": 12, "及格": 12, "不及格": 12}


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d["human_ranking"].update(pearson=1.5), "human_ranking.pearson"),
        (lambda d: d["judge_agreement"].update(graded=3), "judge_agreement.graded': is not the sum of by_grade"),
        (lambda d: d["judge_agreement"]["by_grade"].pop("及格"), "judge_agreement.by_grade"),
        (lambda d: d["models"][1]["vs_reference_pairwise"]["overall"].update(win=90), "win + tie + loss is"),
        (lambda d: d["models"][1]["vs_reference"]["overall"].update(n=-1), "vs_reference.overall.n"),
        (lambda d: d.update(maturity_definition=3), "maturity_definition"),
    ],
)
def test_the_report_check_refuses_bad_new_fields(comparison, edit, message) -> None:
    from clue_core.errors import ClueError

    path = comparison / "comparison.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    edit(data)
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(ClueError, match=r"comparison\.json: field") as error:
        load_comparison(path)
    assert message in str(error.value)
