"""A ``--first N`` run is labelled by what it took (the first N in file order), not as a ``--limit`` draw."""

from __future__ import annotations

from pathlib import Path


def test_a_first_run_is_labelled_first(run_cli, tmp_path: Path) -> None:
    first = run_cli("run", "afqmc", "--model", "baseline", "--sample", "--first", "4", "-o", tmp_path / "first")
    assert first.exit_code == 0, first.output
    drawn = run_cli("run", "afqmc", "--model", "baseline", "--sample", "--limit", "4", "-o", tmp_path / "drawn")
    assert drawn.exit_code == 0, drawn.output
    report = run_cli("report", tmp_path / "first", tmp_path / "drawn", "-o", tmp_path / "report")
    assert report.exit_code == 0, report.output
    rows = [line for line in report.output.splitlines() if line.startswith("baseline")]
    assert any("--first 4" in line for line in rows) and any("--limit 4" in line for line in rows), report.output
