"""``clue-core submit`` refuses a run with nothing to submit and names the manifest of an unknown
task (issue 18: M13, L1); no zip is left behind."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clue_core.errors import ClueError
from clue_core.kernel import Kernel
from clue_core.submission import build_submission
from tests.compare.fixtures import write_run as write_superclue_run


@pytest.fixture(scope="module")
def kernel() -> Kernel:
    """The installed plugins (the superclue task among them)."""
    return Kernel()


def _one_line_error(result) -> str:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and result.output.count("\n") == 1, result.output
    return result.output


def test_a_superclue_run_has_nothing_to_submit(run_cli, kernel, tmp_path: Path) -> None:
    if "superclue" not in kernel.tasks:
        pytest.skip("clue-tasks-superclue is not installed")
    root = write_superclue_run(tmp_path / "qwen", "qwen", [("q1", "计算", 8.0)])
    out = tmp_path / "s.zip"
    message = _one_line_error(run_cli("submit", root, "-o", out, kernel=kernel))
    assert str(root / "superclue") in message and "no leaderboard files" in message
    assert not out.exists() and list(tmp_path.glob("*.zip*")) == [] and list(tmp_path.glob(".s.zip*")) == []


def test_no_run_at_all_writes_no_empty_zip(kernel, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import clue_core.submission as submission

    monkeypatch.setattr(submission, "find_run_dirs", lambda paths: [])  # every other check passed, nothing found
    with pytest.raises(ClueError, match="no leaderboard files"):
        build_submission(kernel, [tmp_path], tmp_path / "s.zip")
    assert not (tmp_path / "s.zip").exists()


def test_an_unknown_task_names_the_manifest(run_cli, kernel, tmp_path: Path) -> None:
    run_dir = tmp_path / "runs" / "mystery"
    run_dir.mkdir(parents=True)
    (run_dir / "manifest.json").write_text(json.dumps({"status": "complete", "task": "no-such-task"}),
                                           encoding="utf-8")
    message = _one_line_error(run_cli("submit", run_dir, "-o", tmp_path / "s.zip", kernel=kernel))
    assert f"{run_dir / 'manifest.json'}: field 'task': unknown task 'no-such-task'" in message
    assert not (tmp_path / "s.zip").exists()
