"""The local executor on two worker processes, and the Ray executor on a local cluster: the same results."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .conftest import TINY, summary, write_sweep

pytestmark = pytest.mark.slow


def invoke(*args: object):
    from click.testing import CliRunner

    from clue_core.cli import cli

    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture(scope="module")
def local_sweep(tmp_path_factory) -> tuple[Path, Path, str]:
    """Two hf-tiny trials (two seeds) on two local worker processes."""
    root = tmp_path_factory.mktemp("executors")
    sweep = write_sweep(root / "s.toml", tasks=["afqmc"], models=["hf-tiny"], seeds=[1, 2], sample=True,
                        settings={**TINY, "learning_rate": 5e-2}, resources={"cpus": 1})
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CLUE_HOME", str(root / "home"))
        result = invoke("sweep", sweep, "-o", root / "local", "--workers", "2")
    assert result.exit_code == 0, result.output
    return sweep, root / "local", result.output


def test_two_local_workers_run_the_trials_in_two_processes(local_sweep):
    _, out, output = local_sweep
    assert "2 trials: 0 already complete, 2 to run (local, 2 worker(s))" in output
    assert [t["status"] for t in summary(out)["trials"]] == ["complete", "complete"]
    pids = {(out / t["id"] / "trial.log").read_text(encoding="utf-8").split("(pid ")[1].split(")")[0]
            for t in summary(out)["trials"]}
    assert len(pids) == 2


def run_files(out: Path) -> dict[str, bytes]:
    """Every trial's dev predictions (with the model's scores) and dev metrics."""
    found = {}
    for trial in summary(out)["trials"]:
        run = out / trial["run_dir"]
        found[f"{trial['id']}/dev.jsonl"] = (run / "predictions" / "dev.jsonl").read_bytes()
        found[f"{trial['id']}/test"] = (run / "predictions" / "test-1.1.jsonl").read_bytes()
        metrics = json.loads((run / "metrics.json").read_text(encoding="utf-8"))
        found[f"{trial['id']}/dev"] = json.dumps(metrics["dev"]).encode()
    return found


@pytest.mark.ray
def test_the_ray_executor_gives_identical_results_and_stops_its_cluster(local_sweep, tmp_path, monkeypatch):
    import psutil
    import ray

    sweep, local_out, _ = local_sweep
    monkeypatch.setenv("CLUE_HOME", str(tmp_path / "home"))
    result = invoke("sweep", sweep, "-o", tmp_path / "ray", "--executor", "ray", "--workers", "2")
    assert result.exit_code == 0, result.output
    assert "starting a local Ray cluster (2 CPUs)" in result.output
    assert [t["status"] for t in summary(tmp_path / "ray")["trials"]] == ["complete", "complete"]
    assert summary(tmp_path / "ray")["executor"] == "ray"
    assert run_files(tmp_path / "ray") == run_files(local_out)  # same seeds, same bytes
    assert not ray.is_initialized()
    left = [p.name() for p in psutil.Process().children(recursive=True) if p.is_running()]
    assert not [name for name in left if "raylet" in name or "gcs_server" in name], left
