"""A section's ``empty`` value keeps its key in report.json when none of its inputs is found:
report.json has held ``"comparisons": []`` for runs without a comparison since before the report
was a plugin, and readers of the file rely on the key."""

from __future__ import annotations

import dataclasses
import json

from clue_core.kernel import Kernel
from clue_core.plugin import hookimpl
from clue_tasks_superclue.hooks import SUPERCLUE_SECTION


def test_a_report_without_comparison_keeps_comparisons_empty(run_cli, tmp_path):
    runs = tmp_path / "runs"
    assert run_cli("run", "afqmc", "--model", "baseline", "--sample", "-o", runs).exit_code == 0
    result = run_cli("report", runs, "-o", tmp_path / "page")
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "page" / "report.json").read_text(encoding="utf-8"))
    assert report["comparisons"] == []
    assert [s["name"] for s in report["sections"]] == ["explorer"]  # nothing shown for it (the explorer: the run)
    assert "id=\"superclue\"" not in (tmp_path / "page" / "index.html").read_text(encoding="utf-8")


def test_an_empty_value_that_is_not_json_is_one_line(run_cli, tmp_path):
    broken = dataclasses.replace(SUPERCLUE_SECTION, name="odd", key="odd", empty=({1, 2},))

    class Plugin:
        @hookimpl
        def clue_report_sections(self):
            return [broken]

    kernel = Kernel()
    kernel.register(Plugin(), "odd-plugin")
    runs = tmp_path / "runs"
    assert run_cli("run", "afqmc", "--model", "baseline", "--sample", "-o", runs, kernel=kernel).exit_code == 0
    result = run_cli("report", runs, "-o", tmp_path / "page", kernel=kernel)
    assert result.exit_code == 2
    assert "report section 'odd' (plugin odd-plugin): its empty value is not plain JSON" in result.output
    assert not (tmp_path / "page").exists()
