"""``clue-core submit FOLDER`` leaves out a run of a task no leaderboard scores (DataCLUE's), saying so, and
packs the others; the same run named itself is refused, since its files were asked for."""

from __future__ import annotations

import zipfile
from pathlib import Path


def test_a_folder_with_a_dataclue_run_packs_the_others(run_cli, tmp_path: Path) -> None:
    result = run_cli("run", "afqmc", "dataclue-cic", "--model", "baseline", "--sample", "-o", tmp_path / "runs")
    assert result.exit_code == 0, result.output
    submitted = run_cli("submit", tmp_path / "runs", "-o", tmp_path / "s.zip")
    assert submitted.exit_code == 0, submitted.output
    assert "dataclue-cic: no leaderboard scores its runs): not in the zip" in submitted.output
    with zipfile.ZipFile(tmp_path / "s.zip") as archive:
        names = archive.namelist()
    assert names and all(name.startswith("afqmc") for name in names), names
    alone = run_cli("submit", tmp_path / "runs" / "dataclue-cic", "-o", tmp_path / "t.zip")
    assert alone.exit_code == 2 and "has no leaderboard files to submit" in alone.output
    assert not (tmp_path / "t.zip").exists()
