"""Edges of ``clue-core run`` a hostile user reaches (issue 18 review): a run folder that is a
symbolic link, ``--resume`` of a complete run asked for other data or other reported
settings, a staging folder a kill left empty, ``--resume --overwrite`` together, an output
folder that is itself a run, and a full disk at the output folder."""

from __future__ import annotations

import errno
import json
import os
import shutil
from pathlib import Path

import pytest

from clue_core.errors import ClueError
from clue_core.plugin import ModelSpec, Setting, hookimpl
from clue_core.rundir import RunLock, RunPaths

TASK = "review-sentiment"
SAMPLE = Path(__file__).parents[2] / "examples/clue-example-plugin/clue_example_plugin/sample"


def files_under(folder: Path) -> dict[Path, bytes]:
    return {p.relative_to(folder): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_overwrite_of_a_run_folder_that_is_a_symlink_replaces_the_link_again_and_again(run_cli, tmp_path):
    """The link is renamed aside and must then be unlinked (``rmtree`` refuses links): else a
    ``.replaced`` link stays and every later ``--overwrite`` fails on it."""
    elsewhere, out = tmp_path / "elsewhere", tmp_path / "out"
    assert run_cli("run", TASK, "--model", "baseline", "--sample", "-o", elsewhere).exit_code == 0
    kept = files_under(elsewhere)
    out.mkdir()
    (out / TASK).symlink_to(elsewhere / TASK, target_is_directory=True)
    for _ in range(2):
        result = run_cli("run", TASK, "--model", "baseline", "--sample", "-o", out, "--overwrite")
        assert result.exit_code == 0, result.output
        assert sorted(p.name for p in out.iterdir()) == [TASK]
    assert not (out / TASK).is_symlink()
    assert files_under(elsewhere) == kept  # the folder the link pointed to is the user's: untouched


def test_publish_over_a_dangling_replaced_link_puts_the_run_in_place(tmp_path):
    paths = RunPaths(tmp_path / "task")
    paths.final.mkdir()
    paths.staging.mkdir()
    (paths.staging / "new").write_text("new")
    (tmp_path / ".task.replaced").symlink_to(tmp_path / "gone")
    paths.publish()
    assert (paths.final / "new").read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["task"]


def test_resume_of_a_complete_sample_run_with_a_data_folder_says_the_data_differs(run_cli, tmp_path):
    out, mine = tmp_path / "out", tmp_path / "mine"
    assert run_cli("run", TASK, "--model", "baseline", "--sample", "-o", out).exit_code == 0
    shutil.copytree(SAMPLE, mine)
    result = run_cli("run", TASK, "--model", "baseline", "--data-dir", mine, "-o", out, "--resume")
    assert result.exit_code == 2
    assert "complete run with a different data" in result.output and "--overwrite" in result.output
    assert "Traceback" not in result.output
    same = run_cli("run", TASK, "--model", "baseline", "--sample", "-o", out, "--resume")
    assert same.exit_code == 0 and "nothing to resume" in same.output


class Reporting:
    """The baseline with a setting that changes its scores (``report``) but not its training."""

    @hookimpl
    def clue_models(self):
        return [ModelSpec("reporting", "clue_builtin.baseline:create", ("classification",), "baseline, one more knob",
                          settings=(Setting("shots", int, 0, "demonstrations", report=True),))]


def test_resume_of_a_complete_run_with_another_reported_setting_says_so(run_cli, isolated_kernel, tmp_path):
    import clue_example_plugin.hooks as example_hooks

    isolated_kernel.register(example_hooks, "example")
    isolated_kernel.register(Reporting(), "reporting")
    out = tmp_path / "out"
    base = ("run", TASK, "--model", "reporting", "--sample", "-o", out)
    assert run_cli(*base, kernel=isolated_kernel).exit_code == 0
    result = run_cli(*base, "--resume", "--set", "shots=4", kernel=isolated_kernel)
    assert result.exit_code == 2
    assert "complete run with a different setting shots (0 → 4)" in result.output


def test_a_staging_folder_a_kill_left_empty_is_no_interrupted_run(run_cli, tmp_path):
    """Killed between creating staging and writing its manifest: nothing to resume, nothing to lose."""
    out = tmp_path / "out"
    for flags in ((), ("--resume",)):
        (out / f".{TASK}.staging").mkdir(parents=True)
        result = run_cli("run", TASK, "--model", "baseline", "--sample", "-o", out, *flags)
        assert result.exit_code == 0, result.output
        assert sorted(p.name for p in out.iterdir()) == [TASK]
        shutil.rmtree(out)


def test_resume_of_a_staging_folder_with_a_broken_manifest_names_the_way_out(run_cli, tmp_path):
    out = tmp_path / "out"
    staging = out / f".{TASK}.staging"
    staging.mkdir(parents=True)
    (staging / "manifest.json").write_text('{"status": "running", "task"')
    result = run_cli("run", TASK, "--model", "baseline", "--sample", "-o", out, "--resume")
    assert result.exit_code == 2
    assert "unreadable manifest" in result.output and "--overwrite to start over" in result.output
    assert (staging / "manifest.json").read_text() == '{"status": "running", "task"'


def test_resume_and_overwrite_together_are_refused_before_anything_is_written(run_cli, tmp_path):
    out = tmp_path / "out"
    assert run_cli("run", TASK, "--model", "baseline", "--sample", "-o", out).exit_code == 0
    before = files_under(out)
    result = run_cli("run", TASK, "--model", "baseline", "--sample", "-o", out, "--resume", "--overwrite")
    assert result.exit_code == 2 and "--resume or --overwrite, not both" in result.output
    assert files_under(out) == before


def test_an_output_folder_that_is_a_run_is_refused(run_cli, tmp_path):
    out = tmp_path / "out"
    assert run_cli("run", TASK, "--model", "baseline", "--sample", "-o", out).exit_code == 0
    before = files_under(out)
    result = run_cli("run", TASK, "--model", "baseline", "--sample", "-o", out / TASK)
    assert result.exit_code == 2
    assert f"output directory {out / TASK} is a run of {TASK}" in result.output
    assert files_under(out) == before


def test_a_full_disk_at_the_output_folder_says_what_to_free(run_cli, tmp_path, monkeypatch):
    real_mkdir = Path.mkdir
    out = tmp_path / "out"

    def full(self, *args, **kwargs):
        if self == out:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(self))
        return real_mkdir(self, *args, **kwargs)

    monkeypatch.setattr(Path, "mkdir", full)
    result = run_cli("run", TASK, "--model", "baseline", "--sample", "-o", out)
    assert result.exit_code == 2
    assert f"cannot write to output directory {out}: No space left on device (the disk is full" in result.output
    assert not out.exists()


def test_overwrite_of_a_staging_path_that_is_a_file_replaces_it(run_cli, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / f".{TASK}.staging").write_text("not a folder")
    result = run_cli("run", TASK, "--model", "baseline", "--sample", "-o", out, "--overwrite")
    assert result.exit_code == 0, result.output
    assert json.loads((out / TASK / "manifest.json").read_text())["status"] == "complete"


@pytest.mark.parametrize("metrics", [None, '{"dev": [1', "[1]", '{"dev": {"accuracy": "x"}}',
                                     '{"dev": {}, "counts": 3}'])
def test_resume_of_a_complete_run_with_damaged_metrics_is_one_line(run_cli, tmp_path, metrics):
    out = tmp_path / "out"
    assert run_cli("run", TASK, "--model", "baseline", "--sample", "-o", out).exit_code == 0
    path = out / TASK / "metrics.json"
    if metrics is None:
        path.unlink()
    else:
        path.write_text(metrics)
    result = run_cli("run", TASK, "--model", "baseline", "--sample", "-o", out, "--resume")
    assert result.exit_code == 2
    assert result.output.strip().splitlines()[-1].startswith(f"error: {path}: ")
    assert "--overwrite" in result.output and "Traceback" not in result.output


@pytest.mark.parametrize("content", ["notes.txt", "manifest.json"])
def test_resume_never_replaces_a_folder_that_holds_no_complete_run(run_cli, tmp_path, content):
    """Nothing to resume and no complete run: the folder is the user's (or a damaged run); only
    --overwrite may replace it."""
    out = tmp_path / "out"
    (out / TASK).mkdir(parents=True)
    (out / TASK / content).write_text("my own words")
    result = run_cli("run", TASK, "--model", "baseline", "--sample", "-o", out, "--resume")
    assert result.exit_code == 2
    assert f"{out / TASK} holds no complete run and there is no interrupted one to resume" in result.output
    assert "--overwrite" in result.output
    assert files_under(out) == {Path(TASK, content): b"my own words"}


def test_a_lock_held_on_another_machine_says_how_to_go_on_if_that_process_is_gone(tmp_path):
    """Another host's process cannot be checked, so the lock is respected; the line says what to do
    if that process is gone (it said only 'wait for it or stop it', which nobody on this machine can)."""
    lock = tmp_path / ".afqmc.lock"
    lock.write_text(json.dumps({"pid": 1, "host": "another-machine.example", "since": "yesterday"}))
    with pytest.raises(ClueError) as refused:
        RunLock(lock, tmp_path / "afqmc").acquire(["clue-core", "run"])
    message = str(refused.value)
    assert "on another-machine.example" in message and message.endswith("if it is gone, delete the lock file")
    assert lock.exists()  # respected, not taken over
