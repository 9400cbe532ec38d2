"""Sweeps that run (in this process, ``--workers 0``): resume and skip, a failed trial, Ctrl-C, the summary, submit."""

from __future__ import annotations

import json
import statistics
import zipfile
from pathlib import Path

import pytest

from clue_core.plugin import read_metrics

from .conftest import TINY, summary, write_sweep

pytestmark = pytest.mark.slow

LRS = [1e-3, 5e-2]


def tiny_sweep(path: Path, seeds: list[int], **more) -> Path:
    return write_sweep(path, tasks=["afqmc"], models=["hf-tiny"], seeds=seeds, sample=True, settings=TINY,
                       grid={"learning_rate": LRS}, **more)


def manifests(out: Path) -> dict[str, int]:
    """Each trial's manifest and when it was last written."""
    return {p.parent.parent.name: p.stat().st_mtime_ns for p in out.glob("*/afqmc/manifest.json")}


def test_a_rerun_runs_nothing_and_a_new_seed_runs_only_its_trials(run_cli, tmp_path):
    out = tmp_path / "sweep"
    sweep = tiny_sweep(tmp_path / "s.toml", [1])
    first = run_cli("sweep", sweep, "-o", out, "--workers", "0")
    assert first.exit_code == 0, first.output
    assert "2 trials: 0 already complete, 2 to run" in first.output
    before = manifests(out)
    assert sorted(before) == [f"afqmc--hf-tiny--learning_rate-{lr}--seed-1" for lr in ("0.001", "0.05")]

    again = run_cli("sweep", sweep, "-o", out, "--workers", "0")
    assert again.exit_code == 0, again.output
    assert "2 trials: 2 already complete, 0 to run" in again.output
    assert manifests(out) == before  # nothing was run again, nothing rewritten
    assert all(t["reused"] and t["status"] == "complete" for t in summary(out)["trials"])

    more = tiny_sweep(tmp_path / "s.toml", [1, 2])
    third = run_cli("sweep", more, "-o", out, "--workers", "0")
    assert third.exit_code == 0, third.output
    assert "4 trials: 2 already complete, 2 to run" in third.output
    after = manifests(out)
    assert {k: after[k] for k in before} == before
    new = [f"afqmc--hf-tiny--learning_rate-{lr}--seed-2" for lr in ("0.001", "0.05")]
    assert sorted(set(after) - set(before)) == new
    check_summary(run_cli, out, tmp_path)


def check_summary(run_cli, out: Path, tmp_path: Path) -> None:
    data = summary(out)
    assert data["schema"] == "clue-core/sweep@1" and data["status"] == "complete"
    assert data["counts"]["total"] == 4 and data["counts"]["complete"] == 4
    for trial in data["trials"]:  # each trial's score is its run's dev primary
        metrics = read_metrics(out / trial["run_dir"])
        assert trial["primary"] == metrics.primary and trial["primary_metric"] == "accuracy"
        assert set(trial) >= {"task", "model", "config", "seed", "primary", "status"}
    assert len(data["configs"]) == 2
    for config in data["configs"]:
        scores = [t["primary"] for t in data["trials"] if t["config"] == config["config"]]
        assert config["mean"] == pytest.approx(statistics.fmean(scores))
        assert config["std"] == pytest.approx(statistics.stdev(scores))
    top = max(data["configs"], key=lambda c: (c["mean"], -c["std"], -LRS.index(c["config"]["learning_rate"])))
    best = data["best"]["afqmc"]
    assert best["config"] == top["config"] and best["mean"] == top["mean"]
    chosen = max((t for t in data["trials"] if t["config"] == best["config"]), key=lambda t: (t["primary"], -t["seed"]))
    assert best["submit"] == chosen["run_dir"]
    boot = best["bootstrap"]  # best against the runner-up, over both seeds of each
    assert boot["difference"] == pytest.approx(best["mean"] - best["runner_up"]["mean"])
    assert boot["low"] <= boot["difference"] <= boot["high"] and 0 < boot["p_value"] <= 1

    selection = json.loads((out / "submit.json").read_text(encoding="utf-8"))
    assert selection["schema"] == "clue-core/selection@1" and selection["runs"] == [best["submit"]]
    result = run_cli("submit", out, "-o", tmp_path / "best.zip")
    assert result.exit_code == 0, result.output
    with zipfile.ZipFile(tmp_path / "best.zip") as archive:
        assert archive.namelist() == ["afqmc_predict.json"]
        assert archive.read("afqmc_predict.json") == (out / best["submit"] / "submission" / "afqmc_predict.json"
                                                      ).read_bytes()


def test_a_failed_trial_is_recorded_and_the_others_go_on(run_cli, tmp_path):
    out = tmp_path / "sweep"
    sweep = write_sweep(tmp_path / "s.toml", tasks=["afqmc"], models=["hf-tiny"], seeds=[1], sample=True,
                        settings={k: v for k, v in TINY.items() if k != "tiny_num_heads"},
                        grid={"tiny_num_heads": [3, 2]})  # 3 heads do not divide 32 units: that trial fails
    result = run_cli("sweep", sweep, "-o", out, "--workers", "0")
    assert result.exit_code == 2, result.output
    last = result.output.strip().splitlines()[-1]
    assert last.startswith("error: 1 of 2 trials failed: afqmc--hf-tiny--tiny_num_heads-3--seed-1: "), last
    assert "must divide tiny_hidden_size" in last and str(out / "summary.json") in last
    # a rerun runs a failed trial again, so say that, and that it fails again unless its cause is fixed
    assert "the same command runs them again" not in last and "runs the failed trials again" in last, last
    trials = {t["config"]["tiny_num_heads"]: t for t in summary(out)["trials"]}
    assert trials[3]["status"] == "failed" and "must divide tiny_hidden_size" in trials[3]["error"]
    assert "\n" not in trials[3]["error"]
    assert trials[2]["status"] == "complete" and trials[2]["primary"] is not None
    assert summary(out)["status"] == "failed" and summary(out)["best"]["afqmc"]["config"] == {"tiny_num_heads": 2}
    assert f"failed: {trials[3]['id']}: " in result.output

    again = run_cli("sweep", sweep, "-o", out, "--workers", "0")  # the failed one is tried again, alone
    assert again.exit_code == 2 and "2 trials: 1 already complete, 1 to run" in again.output


def test_ctrl_c_keeps_finished_trials_and_the_rerun_resumes_the_interrupted_one(run_cli, tmp_path, monkeypatch):
    from clue_builtin import baseline

    fit = baseline.BaselineLearner.fit

    def stop_on_seed_2(self, train, dev, context):
        if context.seed == 2:
            raise KeyboardInterrupt
        return fit(self, train, dev, context)

    monkeypatch.setattr(baseline.BaselineLearner, "fit", stop_on_seed_2)
    out = tmp_path / "sweep"
    sweep = write_sweep(tmp_path / "s.toml", tasks=["afqmc"], models=["baseline"], seeds=[1, 2, 3], sample=True)
    result = run_cli("sweep", sweep, "-o", out, "--workers", "0")
    assert result.exit_code == 130, result.output
    assert "1 of 3 trials complete, 1 kept unfinished, 1 not started" in result.output
    line = next(line for line in result.output.splitlines() if "seed-2 " in line and line.startswith("[sweep]"))
    assert line.startswith("[sweep] 1/3 done · afqmc--baseline--default--seed-2 interrupted: afqmc is kept "), line
    assert "trials/min" not in line and "left" not in line
    data = summary(out)
    assert data["status"] == "interrupted"
    assert [t["status"] for t in data["trials"]] == ["complete", "interrupted", "pending"]
    assert (out / "afqmc--baseline--default--seed-2" / ".afqmc.staging").is_dir()

    monkeypatch.setattr(baseline.BaselineLearner, "fit", fit)
    again = run_cli("sweep", sweep, "-o", out, "--workers", "0")
    assert again.exit_code == 0, again.output
    assert "3 trials: 1 already complete, 2 to run" in again.output
    assert "resuming" in (out / "afqmc--baseline--default--seed-2" / "trial.log").read_text(encoding="utf-8")
    assert [t["status"] for t in summary(out)["trials"]] == ["complete"] * 3
