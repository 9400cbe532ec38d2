"""Planning takes the run folders' locks (and makes the output folder) before any data is read: every
way out between there and the first task's run leaves nothing behind, a Ctrl-C included, and a run
in a distributed launch with a malformed RANK is one line, not a traceback."""

from __future__ import annotations

import clue_example_plugin.hooks as example_hooks
from clue_core import runner
from clue_core.kernel import Kernel


def _kernel(isolated_kernel: Kernel) -> Kernel:
    isolated_kernel.register(example_hooks, "clue-example-plugin")
    return isolated_kernel


def test_ctrl_c_after_planning_releases_the_locks_and_the_folder_it_made(run_cli, isolated_kernel, tmp_path,
                                                                           monkeypatch):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(runner, "read_task_data", interrupted)
    out = tmp_path / "out"
    result = run_cli("run", "review-sentiment", "--model", "baseline", "--sample", "-o", out,
                     kernel=_kernel(isolated_kernel))
    assert result.exit_code == 130, result.output
    assert result.output.strip().splitlines() == ["error: interrupted"]
    assert not out.exists()


def test_a_failed_run_removes_every_empty_folder_it_made_for_a_nested_output_dir(run_cli, isolated_kernel,
                                                                                 tmp_path):
    (tmp_path / "data" / "review-sentiment").mkdir(parents=True)  # no files: refused once the data is read
    out = tmp_path / "deep" / "er" / "out"
    result = run_cli("run", "review-sentiment", "--model", "baseline", "--data-dir", tmp_path / "data",
                     "-o", out, kernel=_kernel(isolated_kernel))
    assert result.exit_code == 2, result.output
    assert "train.json" in result.output and "Traceback" not in result.output
    assert not (tmp_path / "deep").exists()


def test_a_failed_run_leaves_a_folder_that_was_there(run_cli, isolated_kernel, tmp_path):
    (tmp_path / "data" / "review-sentiment").mkdir(parents=True)
    (tmp_path / "deep").mkdir()
    out = tmp_path / "deep" / "out"
    result = run_cli("run", "review-sentiment", "--model", "baseline", "--data-dir", tmp_path / "data",
                     "-o", out, kernel=_kernel(isolated_kernel))
    assert result.exit_code == 2, result.output
    assert (tmp_path / "deep").is_dir() and not out.exists()


def test_a_malformed_rank_is_one_line(run_cli, isolated_kernel, tmp_path, monkeypatch):
    monkeypatch.setenv("RANK", "abc")
    out = tmp_path / "out"
    result = run_cli("run", "review-sentiment", "--model", "baseline", "--sample", "-o", out,
                     kernel=_kernel(isolated_kernel))
    assert result.exit_code == 2, result.output
    assert result.output.strip().splitlines() == [
        "error: RANK='abc' in the environment is not a whole number (torchrun sets it to the process's rank)"]
    assert not out.exists()


def test_a_folder_where_the_lock_file_goes_is_one_line_and_is_left(run_cli, isolated_kernel, tmp_path):
    out = tmp_path / "out"
    (out / ".review-sentiment.lock").mkdir(parents=True)
    result = run_cli("run", "review-sentiment", "--model", "baseline", "--sample", "-o", out,
                     kernel=_kernel(isolated_kernel))
    assert result.exit_code == 2, result.output
    assert result.output.strip().splitlines() == [  # it said it removed a stale lock, then 'Is a directory'
        f"error: {out / '.review-sentiment.lock'} is a folder, not {out / 'review-sentiment'}'s lock file: "
        f"move it away and run again"]
    assert (out / ".review-sentiment.lock").is_dir() and sorted(p.name for p in out.iterdir()) == [
        ".review-sentiment.lock"]
