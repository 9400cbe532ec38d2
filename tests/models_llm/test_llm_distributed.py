"""Two processes on the CPU (gloo), started by torchrun: each answers its shard, every example once."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_two_processes_answer_every_example_once(run_cli, tmp_path: Path) -> None:
    launcher = shutil.which("torchrun", path=str(Path(sys.executable).parent)) or shutil.which("torchrun")
    if launcher is None:
        pytest.skip("torchrun is not installed")
    tasks = ("afqmc", "c3", "cmrc2018")
    one = tmp_path / "one"
    assert run_cli("run", *tasks, "--model", "llm-tiny", "--sample", "-o", one, "--set", "eval_batch_size=3",
                   "--set", "max_new_tokens=6").exit_code == 0
    env = {**os.environ, "CLUE_HOME": str(tmp_path / "clue-home-2"), "OMP_NUM_THREADS": "1"}
    command = [launcher, "--standalone", "--nproc_per_node", "2", "-m", "clue_core", "run", *tasks, "--model",
               "llm-tiny", "--sample", "-o", str(tmp_path / "two"), "--set", "eval_batch_size=3", "--set",
               "max_new_tokens=6"]
    two = subprocess.run(command, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=400)
    assert two.returncode == 0, two.stderr[-3000:]
    for task in tasks:
        single = read_jsonl(one / task / "predictions" / "dev.jsonl")
        double = read_jsonl(tmp_path / "two" / task / "predictions" / "dev.jsonl")
        assert [r["id"] for r in double] == [r["id"] for r in single]  # original order, each once
        assert [r["prediction"] for r in double] == [r["prediction"] for r in single]
        for a, b in zip(single, double):
            if "scores" in a:
                assert a["scores"] == pytest.approx(b["scores"], abs=1e-5)
        info = json.loads((tmp_path / "two" / task / "manifest.json").read_text())
        assert info["world_size"] == 2
        call = info["model_info"]["predict_calls"][0]
        assert call["rank 0"] + call["rank 1"] == call["examples"] == len(single) and call["rank 1"] > 0
        assert call["computed"] == len(single)  # nothing twice: the shards do not overlap
