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


def _snapshot(folder):
    return sorted((str(p.relative_to(folder)), p.stat().st_mtime_ns) for p in folder.rglob("*"))


def test_a_dry_run_takes_no_lock_and_writes_nothing_even_with_resume_or_overwrite(run_cli, isolated_kernel,
                                                                                   tmp_path):
    kernel = _kernel(isolated_kernel)
    out = tmp_path / "out"
    first = run_cli("run", "review-sentiment", "--model", "baseline", "--sample", "-o", out, kernel=kernel)
    assert first.exit_code == 0, first.output
    (out / ".review-sentiment.staging").mkdir()  # an interrupted run beside the complete one
    (out / ".review-sentiment.staging" / "manifest.json").write_text("{", encoding="utf-8")
    (out / ".review-sentiment.lock").write_text('{"pid": 1, "host": "elsewhere.invalid"}', encoding="utf-8")
    before = _snapshot(out)
    for flag in ("--resume", "--overwrite"):
        dry = run_cli("run", "review-sentiment", "--model", "baseline", "--sample", "-o", out, flag, "--dry-run",
                      kernel=kernel)
        assert dry.exit_code == 0, dry.output
        assert _snapshot(out) == before
    fresh = tmp_path / "fresh" / "out"
    dry = run_cli("run", "review-sentiment", "--model", "baseline", "--sample", "-o", fresh, "--resume", "--dry-run",
                  kernel=kernel)
    assert dry.exit_code == 0 and not (tmp_path / "fresh").exists()


def test_a_rank_other_than_0_takes_no_lock_and_writes_nothing(run_cli, isolated_kernel, tmp_path, monkeypatch):
    out = tmp_path / "out"
    out.mkdir()
    (out / ".review-sentiment.lock").write_text('{"pid": 1, "host": "elsewhere.invalid"}', encoding="utf-8")
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "2")
    kernel = _kernel(isolated_kernel)
    result = run_cli("run", "review-sentiment", "--model", "baseline", "--sample", "-o", out, kernel=kernel)
    assert result.exit_code == 0, result.output  # rank 0's lock is no refusal for rank 1: it takes none
    assert sorted(p.name for p in out.iterdir()) == [".review-sentiment.lock"]
    result = run_cli("run", "review-sentiment", "--model", "baseline", "--sample", "-o", tmp_path / "other",
                     kernel=kernel)
    assert result.exit_code == 0 and not (tmp_path / "other").exists()


def test_a_run_folder_holding_the_users_files_is_not_called_a_run(run_cli, isolated_kernel, tmp_path):
    out = tmp_path / "out"
    (out / "review-sentiment").mkdir(parents=True)
    (out / "review-sentiment" / "notes.txt").write_text("mine", encoding="utf-8")
    result = run_cli("run", "review-sentiment", "--model", "baseline", "--sample", "-o", out,
                     kernel=_kernel(isolated_kernel))
    assert result.exit_code == 2, result.output
    assert result.output == (  # it said "already holds a run; pass --overwrite to replace it"
        f"error: {out / 'review-sentiment'} holds files that are not a run (such as notes.txt); move them away or "
        f"use another --output-dir (--overwrite would delete them once the new run is complete)\n")
    assert sorted(p.name for p in out.rglob("*")) == ["notes.txt", "review-sentiment"]


def test_info_with_a_model_that_cannot_run_the_task_says_so_as_run_does(run_cli):
    result = run_cli("info", "kgclue", "--model", "baseline")
    assert result.exit_code == 2, result.output  # it listed the settings of a run that planning refuses
    assert result.output == ("error: model baseline does not support kbqa_triple tasks like kgclue "
                             "(it runs: classification, span, multiple_choice)\n")
    run = run_cli("run", "kgclue", "--model", "baseline", "--sample", "--dry-run")
    assert run.exit_code == 2 and run.output == result.output


def test_info_shows_a_models_resolved_values_as_dry_run_does(run_cli):
    info = run_cli("info", "afqmc", "--model", "llm-tiny")
    dry = run_cli("run", "afqmc", "--model", "llm-tiny", "--sample", "--dry-run")
    assert info.exit_code == 0 and dry.exit_code == 0, info.output + dry.output
    shown = info.output.split("settings with --model llm-tiny:\n")[1].splitlines()
    planned = dry.output.split("  settings:\n")[1].splitlines()
    assert shown == planned  # info said dtype = 'auto' (default) where the run says float32 (auto: ...)
    assert any(line.startswith("    dtype = 'float32'  (auto:") for line in shown), shown


def test_a_later_tasks_metric_that_does_not_import_stops_the_run_before_the_first_task_runs(run_cli,
                                                                                           isolated_kernel,
                                                                                           tmp_path):
    from tests.core.test_scoring_bound import Plugin as BoundPlugin

    kernel = _kernel(isolated_kernel)
    kernel.register(BoundPlugin("tests.core.test_scoring_bound:no_such_function"), "bound")
    out = tmp_path / "out"
    first = run_cli("run", "review-sentiment", "--model", "baseline", "--sample", "-o", out, kernel=kernel)
    assert first.exit_code == 0, first.output
    before = (out / "review-sentiment" / "manifest.json").read_text(encoding="utf-8")
    again = run_cli("run", "review-sentiment", "bound", "--model", "baseline", "--sample", "-o", out,
                    "--overwrite", kernel=kernel)
    assert again.exit_code == 2, again.output
    assert [line for line in again.output.splitlines() if line.startswith("error:")] == [
        "error: metric counted raised AttributeError: module 'tests.core.test_scoring_bound' has no attribute "
        "'no_such_function'"]
    assert "running with" not in again.output  # the first task ran, and replaced its complete run, before
    assert (out / "review-sentiment" / "manifest.json").read_text(encoding="utf-8") == before
    assert sorted(p.name for p in out.iterdir()) == ["review-sentiment"]


def test_locks_are_taken_in_the_order_of_their_paths_not_the_runs(run_cli, tmp_path, monkeypatch):
    """`run afqmc tnews` and `run tnews afqmc` started together used to take one lock each and were then
    both refused the other's; taken in one order, one of them gets both."""
    from clue_core import rundir
    from clue_core.errors import ClueError

    asked: list[str] = []

    def refused(self, command, echo):
        asked.append(self.final.name)
        raise ClueError(f"{self.final} is in use")

    monkeypatch.setattr(rundir.RunLock, "acquire", refused)
    out = tmp_path / "out"
    for order in (["tnews", "afqmc"], ["afqmc", "tnews"]):
        result = run_cli("run", *order, "--model", "baseline", "--sample", "-o", out)
        assert result.exit_code == 2, result.output
        assert result.output.strip().splitlines() == [f"error: {out / 'afqmc'} is in use"]
    assert asked == ["afqmc", "afqmc"]
