"""Two processes on the CPU (gloo), started by torchrun, against the one-process demo run."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow


def torchrun(*args: object, cwd: Path) -> subprocess.CompletedProcess:
    launcher = shutil.which("torchrun", path=str(Path(sys.executable).parent)) or shutil.which("torchrun")
    if launcher is None:
        pytest.skip("torchrun is not installed")
    env = {**os.environ, "CLUE_HOME": str(cwd / "clue-home"), "OMP_NUM_THREADS": "1"}
    command = [launcher, "--standalone", "--nproc_per_node", "2", "-m", "clue_core", "run", *map(str, args)]
    return subprocess.run(command, capture_output=True, text=True, env=env, cwd=cwd, timeout=300)


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_two_processes_train_and_predict_like_one(demo_run, tmp_path: Path) -> None:
    runs, _ = demo_run
    # an odd evaluation batch size makes the last batch uneven across the two processes
    trained = torchrun("afqmc", "c3", "--model", "hf-tiny", "--sample", "--output-dir", tmp_path / "trained",
                       "--set", "progress=false", "--set", "eval_batch_size=3", cwd=tmp_path)
    assert trained.returncode == 0, trained.stderr[-3000:]
    for task in ("afqmc", "c3"):
        state = json.loads((tmp_path / "trained" / task / "training" / "trainer_state.json").read_text())
        assert state["world_size"] == 2
        one = read_jsonl(runs / task / "predictions" / "dev.jsonl")
        two = read_jsonl(tmp_path / "trained" / task / "predictions" / "dev.jsonl")
        assert [r["id"] for r in two] == [r["id"] for r in one]
    assert "world size 2" in trained.stderr

    # the one-process model, predicting in two processes: the very same predictions
    predicted = torchrun("afqmc", "--model", runs / "afqmc" / "model", "--no-train", "--sample",
                         "--output-dir", tmp_path / "predicted", "--set", "eval_batch_size=3", cwd=tmp_path)
    assert predicted.returncode == 0, predicted.stderr[-3000:]
    one = read_jsonl(runs / "afqmc" / "predictions" / "dev.jsonl")
    two = read_jsonl(tmp_path / "predicted" / "afqmc" / "predictions" / "dev.jsonl")
    assert [(r["id"], r["prediction"]) for r in two] == [(r["id"], r["prediction"]) for r in one]
    for a, b in zip(one, two):
        assert a["scores"] == pytest.approx(b["scores"], abs=1e-5)
    metrics = [json.loads((d / "afqmc" / "metrics.json").read_text())["dev"] for d in (runs, tmp_path / "predicted")]
    assert metrics[0] == metrics[1]


def test_a_launch_environment_accelerate_refuses_is_one_line_exit_2(monkeypatch, tmp_path: Path) -> None:
    """RANK and WORLD_SIZE without MASTER_ADDR (a hand-set environment, not a launcher's): accelerate's
    ValueError was a traceback; now one ``error:`` line naming what is missing, nothing written."""
    from .conftest import invoke

    for name in ("MASTER_ADDR", "MASTER_PORT", "LOCAL_RANK"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("CLUE_HOME", str(tmp_path / "clue-home"))
    from accelerate.state import PartialState

    PartialState._reset_state()  # as in a fresh process: an earlier test's state would not read the environment
    result = invoke("run", "afqmc", "--model", "hf-tiny", "--sample", "-o", tmp_path / "o")
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert lines[-1].startswith("error: accelerate cannot set up") and "MASTER_ADDR" in lines[-1], result.output
    assert "Traceback" not in result.output and not (tmp_path / "o").exists()
    monkeypatch.delenv("RANK")
    monkeypatch.delenv("WORLD_SIZE")
    assert not {"LOCAL_RANK", "MASTER_PORT", "MASTER_ADDR"} & set(os.environ)  # accelerate's were taken back
    again = invoke("run", "afqmc", "--model", "hf-tiny", "--sample", "--limit", "2", "-o", tmp_path / "o")
    assert again.exit_code == 0, again.output  # a later run in this process is a plain one-process run
