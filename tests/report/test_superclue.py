"""comparison.json: checked with one clear error per problem, bands and quadrant derived."""

from __future__ import annotations

import copy
import json

import pytest

from clue_core.errors import ClueError
from clue_tasks_superclue.compare.comparison_file import band_of, load_comparison
from tests.report.fixtures import COMPARISON, write_comparison


def _load(tmp_path, edit=None):
    data = copy.deepcopy(COMPARISON)
    if edit:
        edit(data)
    return load_comparison(write_comparison(tmp_path, data))


def test_fixture_loads_with_quadrant_and_no_warnings(tmp_path) -> None:
    comparison = _load(tmp_path)
    assert comparison["warnings"] == []
    assert comparison["quadrant"]["x"]["dimensions"] == ["计算", "逻辑推理", "知识百科", "语言理解"]
    assert comparison["quadrant"]["split_source"] == "mean of the models"
    gpt = comparison["models"][0]
    assert gpt["quadrant"]["x"] == pytest.approx((82.1 + 80.4 + 78.0 + 79.5) / 4)
    assert comparison["categories"][2]["name_en"] == "Hard"


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d.update(schema="other"), "field 'schema'"),
        (lambda d: d["models"][0]["dimensions"].update({"写作": 50}), "models[0].dimensions.写作"),
        (lambda d: d["models"][0].update(total=101), "models[0].total': expected a number from 0 to 100"),
        (lambda d: d["models"][1]["vs_reference"]["overall"].update(win=40), "win + tie + loss is"),
        (lambda d: d["quadrant"]["y"].update(dimensions=["没有"]), "unknown dimension '没有'"),
        (lambda d: d["maturity"][0].update(band="great"), "expected high, middle or low"),
        (lambda d: d["maturity"][0].update(index=1.5), "maturity[0].index"),
    ],
)
def test_bad_files_fail_with_the_field(tmp_path, edit, message) -> None:
    with pytest.raises(ClueError, match=r"comparison\.json: field") as error:
        _load(tmp_path, edit)
    assert message in str(error.value)


def test_soft_problems_are_warnings(tmp_path) -> None:
    def edit(data):
        data["maturity"][1]["band"] = "high"  # 0.71 is middle
        del data["models"][1]["vs_reference"]
        data["quadrant"]["split"] = {"x": 75, "y": 70}

    comparison = _load(tmp_path, edit)
    assert any("index 0.71 is in band middle" in w for w in comparison["warnings"])
    assert any("Qwen2-72B-Instruct: no win/tie/loss" in w for w in comparison["warnings"])
    assert comparison["quadrant"]["split"] == {"x": 75.0, "y": 70.0}


def test_unreadable_file(tmp_path) -> None:
    path = tmp_path / "comparison.json"
    path.write_text("{", encoding="utf-8")
    with pytest.raises(ClueError, match="unreadable"):
        load_comparison(path)
    path.write_text(json.dumps([]), encoding="utf-8")
    with pytest.raises(ClueError, match="expected an object"):
        load_comparison(path)


def test_bands() -> None:
    assert [band_of(x) for x in (0.95, 0.8, 0.79, 0.6, 0.23)] == ["high", "high", "middle", "middle", "low"]


def test_a_comparison_needs_the_html_report(kernel, tmp_path) -> None:
    from clue_report import report_command

    folder = tmp_path / "sc"
    write_comparison(folder)
    with pytest.raises(ClueError, match="add -o DIR"):
        report_command(kernel, [folder])
    assert "comparisons: " in report_command(kernel, [folder], tmp_path / "out")
