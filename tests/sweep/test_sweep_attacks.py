"""The sweep under attack: foreign and damaged folders, stale selections, a full disk, two sweeps at once,
a real SIGINT and a kill -9 of a sweep on worker processes, odd names and values in the file."""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from clue_sweep.spec import load_sweep
from clue_sweep.trials import expand, trial_id

from .conftest import summary, write_sweep
from .processes import HELD, Sweep, sweep_process, wait_for


def baseline_sweep(path: Path, seeds: list[int], **more) -> Path:
    return write_sweep(path, tasks=["afqmc"], models=["baseline"], seeds=seeds, sample=True, **more)


def one_line_error(result) -> str:
    lines = result.output.strip().splitlines()
    assert result.exit_code == 2 and len(lines) == 1 and "Traceback" not in result.output, result.output
    return lines[0]


# -- the sweep's folder -------------------------------------------------------------------------


def test_an_ordinary_run_folder_is_not_taken_for_a_sweep(run_cli, tmp_path):
    plain = tmp_path / "plain"
    assert run_cli("run", "afqmc", "--model", "baseline", "--sample", "-o", plain).exit_code == 0
    before = sorted(p.name for p in plain.iterdir())
    line = one_line_error(run_cli("sweep", baseline_sweep(tmp_path / "s.toml", [1]), "-o", plain, "--workers", "0"))
    assert "holds 'afqmc', which no sweep wrote" in line
    assert sorted(p.name for p in plain.iterdir()) == before  # no summary.json, no submit.json added


def test_an_empty_existing_folder_is_taken(run_cli, tmp_path):
    (tmp_path / "empty").mkdir()
    result = run_cli("sweep", baseline_sweep(tmp_path / "s.toml", [1]), "-o", tmp_path / "empty", "--workers", "0")
    assert result.exit_code == 0, result.output


def test_a_damaged_summary_says_how_to_rebuild_it_and_deleting_it_does(run_cli, tmp_path):
    out, sweep = tmp_path / "out", baseline_sweep(tmp_path / "s.toml", [1, 2])
    assert run_cli("sweep", sweep, "-o", out, "--workers", "0").exit_code == 0
    (out / "summary.json").write_text('{"schema": "clue-core/sweep@1", "trials": [', encoding="utf-8")
    line = one_line_error(run_cli("sweep", sweep, "-o", out, "--workers", "0"))
    assert "summary.json is damaged" in line and "delete summary.json" in line
    (out / "summary.json").unlink()
    again = run_cli("sweep", sweep, "-o", out, "--workers", "0")  # rebuilt from the trial folders
    assert again.exit_code == 0 and "2 trials: 2 already complete, 0 to run" in again.output, again.output
    assert [t["status"] for t in summary(out)["trials"]] == ["complete", "complete"]


def test_a_submit_json_left_by_an_earlier_file_is_removed_when_nothing_is_best(run_cli, tmp_path, monkeypatch):
    from clue_builtin import baseline

    out = tmp_path / "out"
    assert run_cli("sweep", baseline_sweep(tmp_path / "s.toml", [1]), "-o", out, "--workers", "0").exit_code == 0
    assert (out / "submit.json").is_file()

    def broken(self, train, dev, context):
        raise RuntimeError("boom")

    monkeypatch.setattr(baseline.BaselineLearner, "fit", broken)
    result = run_cli("sweep", baseline_sweep(tmp_path / "s.toml", [2]), "-o", out, "--workers", "0")
    assert result.exit_code == 2 and summary(out)["best"] == {}
    assert not (out / "submit.json").exists()  # it named seed 1's run, which this file no longer has


def test_a_full_disk_while_writing_the_summary_is_one_line_and_keeps_the_last_one(run_cli, tmp_path, monkeypatch):
    from clue_core.plugin import atomic_open
    from clue_sweep import summary as summary_module

    out, sweep = tmp_path / "out", baseline_sweep(tmp_path / "s.toml", [1])
    assert run_cli("sweep", sweep, "-o", out, "--workers", "0").exit_code == 0
    kept = (out / "summary.json").read_bytes()

    def full(path, data, **_):
        with atomic_open(path) as handle:
            handle.write('{"schema": ')
            raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(summary_module, "write_json", full)
    line = one_line_error(run_cli("sweep", baseline_sweep(tmp_path / "s.toml", [1, 2]), "-o", out, "--workers", "0"))
    assert line.startswith("error: cannot write the sweep's summary: ") and "summary.json" in line
    assert "the disk is full" in line
    assert (out / "summary.json").read_bytes() == kept
    assert not list(out.glob(".*.tmp"))


# -- the file's names and values ------------------------------------------------------------------


@pytest.mark.parametrize("model", ["hf:/some/path", "llm:Qwen/Qwen2.5-0.5B", "hf:模型/中文", "a--b"])
def test_model_names_of_any_spelling_make_one_safe_folder_name(model):
    made = trial_id("afqmc", model, {}, 1)
    assert "/" not in made and ":" not in made and len(made.encode("utf-8")) <= 255
    assert made == trial_id("afqmc", model, {}, 1) and made != trial_id("afqmc", model + "x", {}, 1)
    assert made.isascii()


def test_one_float_spelled_two_ways_is_one_trial(tmp_path):
    a = expand(load_sweep(write_sweep(tmp_path / "a.toml", tasks=["afqmc"], models=["m"],
                                      grid={"learning_rate": [1e-5]})))
    (tmp_path / "b.toml").write_text('tasks = ["afqmc"]\nmodels = ["m"]\n[grid]\nlearning_rate = [0.00001]\n',
                                     encoding="utf-8")
    b = expand(load_sweep(tmp_path / "b.toml"))
    assert [t.id for t in a] == [t.id for t in b]


@pytest.mark.parametrize("seeds", ['["1"]', "[-1]", "[1.5]", "[true]"])
def test_seeds_that_are_not_whole_non_negative_numbers_are_refused(run_cli, tmp_path, seeds):
    path = tmp_path / "s.toml"
    path.write_text(f'tasks = ["afqmc"]\nmodels = ["baseline"]\nseeds = {seeds}\n', encoding="utf-8")
    line = one_line_error(run_cli("sweep", path, "-o", tmp_path / "out"))
    assert "seeds" in line and str(path) in line and not (tmp_path / "out").exists()


def test_a_grid_value_that_is_a_list_is_refused(run_cli, tmp_path):
    path = tmp_path / "s.toml"
    path.write_text('tasks = ["afqmc"]\nmodels = ["baseline"]\n[grid]\nx = [[1, 2]]\n', encoding="utf-8")
    assert "grid.x" in one_line_error(run_cli("sweep", path, "-o", tmp_path / "out"))


# -- processes: two sweeps at once, SIGINT and kill -9 from outside -------------------------------
# Each waits for the event it needs (a marker file, the exit, the last process gone) and kills the
# sweep's whole session when it ends, a failed check included (tests/sweep/processes.py).


def held_env(tmp_path: Path, **more: str) -> tuple[dict[str, str], Path]:
    hold = tmp_path / "hold"
    hold.write_text("", encoding="utf-8")
    return {**os.environ, "SWEEP_HOLD": str(hold), "CLUE_HOME": os.environ["CLUE_HOME"], **more}, hold


@contextlib.contextmanager
def held(tmp_path: Path, out: Path, seeds: list[int]) -> Iterator[tuple[Sweep, Path]]:
    """A real sweep on two worker processes whose trials wait in training until the hold file goes."""
    env, hold = held_env(tmp_path)
    sweep = baseline_sweep(tmp_path / "s.toml", seeds)
    with sweep_process([HELD, "sweep", sweep, "-o", out, "--workers", "2"], env, tmp_path / "sweep.out") as process:
        wait_for("both workers reach training", lambda: len(worker_pids(tmp_path)) == 2, process)
        yield process, hold


def worker_pids(tmp_path: Path) -> list[int]:
    return [int(p.name.split(".")[1]) for p in tmp_path.glob("hold.*")]


def gone(pid: int) -> bool:
    import psutil

    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


@pytest.mark.slow
def test_a_real_sigint_stops_the_workers_and_the_rerun_resumes(run_cli, tmp_path):
    out = tmp_path / "out"
    with held(tmp_path, out, [1, 2, 3]) as (process, hold):
        pids = worker_pids(tmp_path)
        process.interrupt()  # to the sweep alone, as `kill -INT` does: it must stop its workers
        assert process.wait_exit() == 130, process.output()
        output = process.output()
        assert "1 kept unfinished" not in output and "2 kept unfinished, 1 not started" in output, output
        assert "Traceback" not in output, output
        process.wait_session_gone()
        assert all(gone(p) for p in pids)
    data = summary(out)
    assert data["status"] == "interrupted"
    assert sorted(t["status"] for t in data["trials"]) == ["interrupted", "interrupted", "pending"]
    hold.unlink()
    again = run_cli("sweep", tmp_path / "s.toml", "-o", out, "--workers", "0")
    assert again.exit_code == 0 and "3 trials: 0 already complete, 3 to run" in again.output, again.output
    resumed = [t for t in data["trials"] if t["status"] == "interrupted"]
    assert all("resuming" in (out / t["id"] / "trial.log").read_text(encoding="utf-8") for t in resumed)
    assert [t["status"] for t in summary(out)["trials"]] == ["complete"] * 3


@pytest.mark.slow
def test_a_second_sweep_into_the_folder_is_refused_in_one_line(run_cli, tmp_path):
    out = tmp_path / "out"
    with held(tmp_path, out, [1, 2]) as (process, hold):
        line = one_line_error(run_cli("sweep", tmp_path / "s.toml", "-o", out, "--workers", "0"))
        assert f"is in use by another clue-core sweep (pid {process.pid})" in line
        assert summary(out)["status"] == "running"  # the first sweep's summary, untouched
        assert all(not (out / t["id"] / "afqmc" / "manifest.json").exists() for t in summary(out)["trials"])
        hold.unlink()
        assert process.wait_exit() == 0, process.output()
    assert summary(out)["status"] == "complete"


@pytest.mark.slow
def test_kill_9_of_the_sweep_leaves_no_workers_and_no_stale_lock(run_cli, tmp_path):
    out = tmp_path / "out"
    with held(tmp_path, out, [1, 2]) as (process, hold):
        pids = worker_pids(tmp_path)
        process.process.kill()
        process.wait_exit()
        process.wait_session_gone()  # the orphaned workers noticed and stopped (the with block kills them if not)
        assert all(gone(p) for p in pids), "the workers of a killed sweep kept running"
    hold.unlink()
    again = run_cli("sweep", tmp_path / "s.toml", "-o", out, "--workers", "0")
    assert again.exit_code == 0 and "2 trials: 0 already complete, 2 to run" in again.output, again.output
    assert [t["status"] for t in summary(out)["trials"]] == ["complete", "complete"]


@pytest.mark.ray
def test_an_unreachable_ray_address_is_one_line_before_anything_is_written(run_cli, tmp_path):
    import socket

    with socket.socket() as free:  # a port nothing listens on
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    sweep = baseline_sweep(tmp_path / "s.toml", [1])
    line = one_line_error(run_cli("sweep", sweep, "-o", tmp_path / "out", "--executor", "ray",
                                  "--address", f"127.0.0.1:{port}"))
    assert line.startswith(f"error: cannot connect to the Ray cluster at 127.0.0.1:{port}: ")
    assert not (tmp_path / "out").exists()
    assert "expected host:port" in one_line_error(run_cli("sweep", sweep, "-o", tmp_path / "out", "--executor",
                                                          "ray", "--address", "nonsense"))


@pytest.mark.ray
@pytest.mark.slow
def test_ctrl_c_of_a_ray_sweep_interrupts_its_trials_and_stops_its_cluster(run_cli, tmp_path):
    out = tmp_path / "out"
    site = str(Path(__file__).with_name("hold_site"))
    env, hold = held_env(tmp_path, PYTHONPATH=os.pathsep.join([site, *filter(None, [os.environ.get("PYTHONPATH")])]))
    sweep = baseline_sweep(tmp_path / "s.toml", [1, 2, 3])
    with sweep_process(["-c", "from clue_core.cli import main; main()", "sweep", sweep, "-o", out, "--executor", "ray",
                        "--workers", "2"], env, tmp_path / "sweep.out") as process:
        wait_for("both Ray trials reach training", lambda: len(worker_pids(tmp_path)) == 2, process)
        assert process.session(), "no Ray process found in the sweep's session"
        process.interrupt()
        assert process.wait_exit() == 130, process.output()
        process.wait_session_gone()  # the local Ray cluster did not outlive the sweep
    assert sorted(t["status"] for t in summary(out)["trials"]) == ["interrupted", "interrupted", "pending"]
    hold.unlink()
    again = run_cli("sweep", sweep, "-o", out, "--workers", "0")
    assert again.exit_code == 0 and [t["status"] for t in summary(out)["trials"]] == ["complete"] * 3
