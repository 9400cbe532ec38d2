"""A circular run's totals stay in the report beside a newer plain run of the same model, which takes
the table's cell (the cell's runs must share their settings, and circular is one)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.slow


def test_the_circular_table_lists_a_run_the_cell_left_out(run_cli, tmp_path: Path) -> None:
    on = run_cli("run", "c3", "--model", "llm-tiny", "--sample", "--set", "circular=all", "-o", tmp_path / "on")
    assert on.exit_code == 0, on.output
    off = run_cli("run", "c3", "--model", "llm-tiny", "--sample", "-o", tmp_path / "off")  # newer: takes the cell
    assert off.exit_code == 0, off.output
    report = run_cli("report", tmp_path / "on" / "c3", tmp_path / "off" / "c3", "-o", tmp_path / "report")
    assert report.exit_code == 0, report.output
    markdown = (tmp_path / "report" / "report.md").read_text("utf-8")
    assert "## Circular evaluation" in markdown, markdown
    row = next(line for line in markdown.splitlines() if line.startswith("| llm-tiny") and "| c3 |" in line)
    assert "| 3 | A " in row, row
