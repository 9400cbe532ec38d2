"""``clue-core submit`` refuses a run with nothing to submit and names the manifest of an unknown
task (issue 18: M13, L1); no zip is left behind."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest

from clue_core.errors import ClueError
from clue_core.kernel import Kernel
from clue_leaderboard.submission import build_submission
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
    import clue_leaderboard.submission as submission

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


# issue 18 round 2, hostile review: where the zip goes


@pytest.fixture(scope="module")
def afqmc_run(kernel, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One complete baseline run of afqmc on the bundled sample (instant)."""
    from clue_core.runner import RunRequest, run

    output = tmp_path_factory.mktemp("submit-runs")
    run(kernel, RunRequest(tasks=["afqmc"], model="baseline", sample=True, output_dir=output, command=["tests"]),
        echo=lambda line: None)
    return output / "afqmc"


def test_a_folder_named_like_the_zip_is_refused_even_with_force(run_cli, kernel, afqmc_run: Path,
                                                                tmp_path: Path) -> None:
    folder = tmp_path / "s.zip"
    (folder / "mine").mkdir(parents=True)
    for extra in ((), ("--force",)):
        message = _one_line_error(run_cli("submit", afqmc_run, "-o", folder, *extra, kernel=kernel))
        assert f"{folder} is a folder" in message
    assert [p.name for p in folder.iterdir()] == ["mine"] and [p.name for p in tmp_path.iterdir()] == ["s.zip"]


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EROFS])
def test_a_disk_fault_writing_the_zip_is_one_line(run_cli, kernel, afqmc_run: Path, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch, code: int) -> None:
    import zipfile

    def fail(self, *args, **kwargs):
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(zipfile.ZipFile, "write", fail)
    out = tmp_path / "s.zip"
    message = _one_line_error(run_cli("submit", afqmc_run, "-o", out, kernel=kernel))
    assert f"cannot write the submission: {out}: {os.strerror(code)}" in message
    assert list(tmp_path.iterdir()) == []


def test_the_same_run_named_twice_is_packed_once(run_cli, kernel, afqmc_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "s.zip"
    result = run_cli("submit", afqmc_run, afqmc_run.parent, "-o", out, kernel=kernel)
    assert result.exit_code == 0, result.output
    assert "wrote" in result.output and "(1 files)" in result.output
