"""A folder holding only unfinished runs is one line naming them, exit 2, nothing written: an empty
table with exit 0 read as success when the run had been interrupted (issue: report on a folder
holding only an interrupted run)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest


def _one_line_error(result) -> str:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and result.output.count("\n") == 1, result.output
    return result.output


@pytest.fixture
def interrupted(baseline_runs: Path, tmp_path: Path) -> Path:
    """``clue-core run -o runs`` killed during afqmc: the staging folder is all there is."""
    folder = tmp_path / "runs"
    staging = folder / ".afqmc.staging"
    shutil.copytree(baseline_runs / "afqmc", staging)
    manifest = staging / "manifest.json"
    manifest.write_text(json.dumps({**json.loads(manifest.read_text(encoding="utf-8")), "status": "running"}),
                        encoding="utf-8")
    (staging / "metrics.json").unlink()
    return folder


@pytest.mark.parametrize("extra", [(), ("--json",), ("-o", "out")], ids=["plain", "json", "html"])
def test_only_an_interrupted_run_is_one_line_exit_2(run_cli, kernel, interrupted: Path, tmp_path: Path,
                                                     extra: tuple[str, ...]) -> None:
    out = tmp_path / "out"
    args = [str(out) if a == "out" else a for a in extra]
    message = _one_line_error(run_cli("report", interrupted, *args, kernel=kernel))
    assert message.startswith(f"error: {interrupted}: holds only an interrupted run, nothing to report: ")
    assert str(interrupted / ".afqmc.staging") in message and "--resume" in message
    assert not out.exists()


def test_several_unfinished_runs_are_all_named(run_cli, kernel, interrupted: Path, baseline_runs: Path) -> None:
    shutil.copytree(baseline_runs / "tnews", interrupted / "tnews")
    (interrupted / "tnews" / "metrics.json").unlink()
    message = _one_line_error(run_cli("report", interrupted, kernel=kernel))
    assert "holds only 2 unfinished runs" in message
    assert f"{interrupted / 'tnews'} (no metrics.json)" in message and ".afqmc.staging" in message


def test_a_finished_run_beside_it_is_still_reported(run_cli, kernel, interrupted: Path, baseline_runs: Path
                                                     ) -> None:
    shutil.copytree(baseline_runs / "tnews", interrupted / "tnews")
    result = run_cli("report", interrupted, kernel=kernel)
    assert result.exit_code == 0, result.output
    assert "tnews" in result.output and f"left out, unfinished: {interrupted / '.afqmc.staging'}" in result.output
