"""Runs never lose or misreport work: overwrite, locking, resume checks, OS errors.

The lock, concurrency and kill cases run as real separate processes with a test-only
"sleepy" model (installed through a real entry point) that waits inside ``fit`` until the
test lets it go, so a run can be caught, and killed, mid-way.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

TASK = "review-sentiment"
SAMPLE = Path(__file__).parents[2] / "examples/clue-example-plugin/clue_example_plugin/sample"
OTHERS = "clue-models-hf,clue-tasks-classic,clue-tasks-mrc"

SLEEPY = '''
import json, os, time
from pathlib import Path
from clue_core.plugin import CLASSIFICATION, MODEL_FILE, ModelSpec, Prediction, Setting, hookimpl, write_json

@hookimpl
def clue_models():
    return [ModelSpec("sleepy", "sleepy_plugin:create", (CLASSIFICATION,), "waits in fit for a go file",
                      settings=(Setting("steps", int, 3, "training steps", schedule=True),))]

def create(argument, task, settings):
    return Sleepy(task.labels[0])

class Sleepy:
    def __init__(self, label):
        self.label = label
    def fit(self, train, dev, context):
        gate = Path(os.environ["SLEEPY_GATE"])
        (gate.parent / "started").write_text(str(os.getpid()))
        deadline = time.time() + 60
        while not gate.exists() and time.time() < deadline:
            time.sleep(0.05)
    def predict(self, examples):
        return [Prediction(e.id, self.label) for e in examples]
    def save(self, directory):
        write_json(Path(directory) / MODEL_FILE, {"model": "sleepy"})
'''


@pytest.fixture
def sleepy_env(tmp_path: Path) -> dict[str, str]:
    """A real entry point for the sleepy model, and the environment a subprocess needs."""
    site = tmp_path / "site"
    dist = site / "sleepy_plugin-0.1.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: sleepy-plugin\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[clue_core]\nsleepy = sleepy_plugin\n")
    (site / "sleepy_plugin.py").write_text(SLEEPY)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(Path(__file__).parents[2])]),
           "CLUE_DISABLE_PLUGINS": OTHERS, "SLEEPY_GATE": str(tmp_path / "go"),
           "CLUE_HOME": str(tmp_path / "home")}
    env.pop("CLUE_STRICT_PLUGINS", None)
    return env


def start_run(env: dict[str, str], out: Path, *extra: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "clue_core", "run", TASK, "--model", "sleepy", "--sample",
                             "-o", str(out), *extra], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def wait_started(tmp_path: Path, process: subprocess.Popen) -> None:
    deadline = time.time() + 60
    while not (tmp_path / "started").exists():
        if process.poll() is not None:
            raise AssertionError(f"run ended early: {process.communicate()}")
        if time.time() > deadline:
            process.kill()
            raise AssertionError("run never reached fit")
        time.sleep(0.05)


def run_sync(env: dict[str, str], out: Path, *extra: str, model: str = "sleepy") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "clue_core", "run", TASK, "--model", model, "--sample",
                           "-o", str(out), *extra], env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.slow
def test_a_second_run_into_the_same_directory_is_refused_naming_the_holder(sleepy_env, tmp_path):
    out = tmp_path / "out"
    first = start_run(sleepy_env, out)
    wait_started(tmp_path, first)
    second = run_sync(sleepy_env, out, "--overwrite")
    assert second.returncode == 2
    assert f"is in use by process {first.pid}" in second.stderr and "Traceback" not in second.stderr
    assert len(second.stderr.strip().splitlines()) == 1
    (tmp_path / "go").write_text("")
    assert first.wait(timeout=60) == 0, first.stderr.read() if first.stderr else ""
    manifest = json.loads((out / TASK / "manifest.json").read_text())
    assert manifest["status"] == "complete" and manifest["model"] == "sleepy"
    assert not (out / f".{TASK}.lock").exists()  # released on exit


@pytest.mark.slow
def test_a_killed_run_leaves_a_stale_lock_that_resume_detects_and_a_staging_folder_it_continues(
        sleepy_env, tmp_path):
    out = tmp_path / "out"
    first = start_run(sleepy_env, out)
    wait_started(tmp_path, first)
    first.send_signal(signal.SIGKILL)
    first.wait(timeout=30)
    assert (out / f".{TASK}.lock").exists() and (out / f".{TASK}.staging").is_dir()
    assert not (out / TASK).exists()
    plain = run_sync(sleepy_env, out)
    assert plain.returncode == 2 and "an interrupted run is in" in plain.stderr and "--resume" in plain.stderr
    assert f"removed a stale lock on {out / TASK} left by process {first.pid}" in plain.stderr
    other_model = run_sync(sleepy_env, out, "--resume", model="baseline")
    assert other_model.returncode == 2
    assert "cannot resume" in other_model.stderr and "model ('sleepy' → 'baseline')" in other_model.stderr
    changed = run_sync(sleepy_env, out, "--resume", "--set", "steps=60")
    assert changed.returncode == 2 and "setting steps (3 → 60)" in changed.stderr
    (tmp_path / "go").write_text("")
    resumed = run_sync(sleepy_env, out, "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert "resuming" in resumed.stderr
    assert json.loads((out / TASK / "manifest.json").read_text())["status"] == "complete"
    assert not (out / f".{TASK}.staging").exists()
    again = run_sync(sleepy_env, out, "--resume")
    assert again.returncode == 0 and "already complete; nothing to resume" in again.stderr


def test_overwrite_keeps_the_old_run_until_the_new_one_is_complete(run_cli, tmp_path):
    out = tmp_path / "out"
    assert run_cli("run", TASK, "--model", "baseline", "--sample", "-o", out).exit_code == 0
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    broken = tmp_path / "broken"
    shutil.copytree(SAMPLE, broken)
    (broken / "dev.json").write_text('{"id": 1, "review": "好", "label": "great"}\n')
    attempts = [
        ("--set", "lerning_rate=1"),
        ("--data-dir", str(broken)),
    ]
    for extra in attempts:
        args = [a for a in ("run", TASK, "--model", "baseline", "-o", out, "--overwrite", *extra)]
        if "--data-dir" not in extra:
            args.append("--sample")
        result = run_cli(*args)
        assert result.exit_code == 2, result.output
        assert {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()} == before, extra
    bad_model = run_cli("run", TASK, "--model", str(tmp_path / "nowhere"), "--sample", "-o", out, "--overwrite")
    assert bad_model.exit_code == 2
    assert {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert "dev.json:1: field 'label': unknown label 'great'" in run_cli(
        "run", TASK, "--model", "baseline", "-o", out, "--overwrite", "--data-dir", broken).output
    replaced = run_cli("run", TASK, "--model", "baseline", "--sample", "-o", out, "--overwrite", "--seed", "3")
    assert replaced.exit_code == 0
    assert json.loads((out / TASK / "manifest.json").read_text())["seed"] == 3
    assert sorted(p.name for p in out.iterdir()) == [TASK]  # no staging, lock or replaced folder left


def test_a_bad_second_task_stops_the_run_before_the_first_task_writes(run_cli, isolated_kernel, tmp_path):
    import dataclasses

    import clue_example_plugin.hooks as example_hooks
    from clue_core.plugin import hookimpl

    class Two:
        @hookimpl
        def clue_tasks(self):
            good = example_hooks.clue_tasks()[0]
            return [good, dataclasses.replace(good, name="second", labels=("only-one",),
                                              test_versions=(), prompt=None)]

    isolated_kernel.register(Two(), "two")
    out = tmp_path / "out"
    result = run_cli("run", TASK, "second", "--model", "baseline", "--sample", "-o", out, kernel=isolated_kernel)
    assert result.exit_code == 2 and "unknown label" in result.output
    assert not out.exists()


def test_output_directory_that_is_a_file_is_one_line(run_cli, tmp_path):
    target = tmp_path / "file"
    target.write_text("mine")
    result = run_cli("run", TASK, "--model", "baseline", "--sample", "-o", target)
    assert result.exit_code == 2 and "is a file, not a folder" in result.output
    assert target.read_text() == "mine"


@pytest.mark.parametrize("code", [errno.EACCES, errno.EROFS])
def test_an_unwritable_output_directory_is_one_line_and_leaves_nothing(run_cli, tmp_path, monkeypatch, code):
    real_mkdir = Path.mkdir
    out = tmp_path / "out"

    def refuse(self, *args, **kwargs):
        if self == out:
            raise OSError(code, os.strerror(code), str(self))
        return real_mkdir(self, *args, **kwargs)

    monkeypatch.setattr(Path, "mkdir", refuse)
    result = run_cli("run", TASK, "--model", "baseline", "--sample", "-o", out)
    assert result.exit_code == 2
    assert f"cannot write to output directory {out}: {os.strerror(code)}" in result.output
    assert not out.exists()


def test_disk_full_while_writing_is_one_line_and_leaves_nothing(run_cli, tmp_path, monkeypatch):
    import clue_core.record_write as record_write  # the run record's one writer

    real = record_write.write_jsonl

    def full(path, records):
        real(path, records)
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))

    monkeypatch.setattr(record_write, "write_jsonl", full)
    out = tmp_path / "out"
    result = run_cli("run", TASK, "--model", "baseline", "--sample", "-o", out)
    assert result.exit_code == 2 and "No space left on device" in result.output
    assert "Traceback" not in result.output
    assert not out.exists()


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("unshare"), reason="needs root to mount a tmpfs")
def test_a_real_full_disk_is_one_line_and_leaves_nothing(sleepy_env, tmp_path):
    """A 16 KiB tmpfs, mounted in a private mount namespace that ends with the process."""
    out = tmp_path / "small"
    out.mkdir()
    script = (f"mount -t tmpfs -o size=16k tmpfs {out} && "
              f"{sys.executable} -m clue_core run {TASK} --model baseline --sample -o {out}/runs; "
              f"code=$?; ls -A {out}; exit $code")
    probe = subprocess.run(["unshare", "-m", "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip("cannot create a mount namespace here")
    result = subprocess.run(["unshare", "-m", "sh", "-c", script], env=sleepy_env, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "No space left on device" in result.stderr and "Traceback" not in result.stderr
    assert result.stdout.strip() == ""  # nothing left on the full disk


def test_submit_of_a_folder_ignores_an_interrupted_run_in_staging(run_cli, tmp_path):
    out = tmp_path / "out"
    assert run_cli("run", TASK, "--model", "baseline", "--sample", "-o", out).exit_code == 0
    staging = out / ".other.staging"
    staging.mkdir()
    (staging / "manifest.json").write_text('{"status": "running", "task": "other"}')
    result = run_cli("submit", out, "-o", tmp_path / "s.zip")
    assert result.exit_code == 0, result.output
    assert "wrote" in result.output and "(1 files)" in result.output
