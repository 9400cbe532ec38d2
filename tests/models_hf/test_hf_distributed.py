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
