"""Trial ids (readable, stable, unique, safe as folder names) and the summary's arithmetic and choice of best."""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest

from clue_sweep.spec import load_sweep
from clue_sweep.summary import Summary, table
from clue_sweep.trials import MAX_ID, expand, trial_id

from .conftest import write_sweep


def test_an_id_reads_as_what_the_trial_runs():
    assert trial_id("afqmc", "hf-tiny", {"learning_rate": 2e-5, "batch_size": 16}, 1) == \
        "afqmc--hf-tiny--batch_size-16.learning_rate-2e-05--seed-1"
    assert trial_id("afqmc", "baseline", {}, 42) == "afqmc--baseline--default--seed-42"
    assert trial_id("tnews", "hf-tiny", {"pet_instruction": True, "method": "pet"}, 3) == \
        "tnews--hf-tiny--method-pet.pet_instruction-true--seed-3"


def test_an_id_does_not_depend_on_the_order_the_file_lists_settings_in():
    assert trial_id("afqmc", "m", {"a": 1, "b": 2}, 1) == trial_id("afqmc", "m", {"b": 2, "a": 1}, 1)


def test_unsafe_or_long_ids_get_a_hash_and_stay_distinct_and_short():
    a = trial_id("afqmc", "hf:hfl/rbt3", {}, 1)
    b = trial_id("afqmc", "hf:hfl-rbt3", {}, 1)  # the same once made safe: the hash tells them apart
    assert a != b and "/" not in a and ":" not in a and a.endswith("--seed-1") and a.startswith("afqmc--hf-hfl-rbt3")
    assert trial_id("afqmc", "hf:hfl/rbt3", {}, 1) == a  # stable
    long = trial_id("afqmc", "hf-tiny", {f"setting_{i}": "x" * 20 for i in range(10)}, 7)
    assert len(long) <= MAX_ID and long.endswith("--seed-7")
    assert long != trial_id("afqmc", "hf-tiny", {f"setting_{i}": "x" * 20 for i in range(9)}, 7)
    assert trial_id("t", "m", {"x": 1}, 1) != trial_id("t", "m", {"x": 1.0}, 1)  # an int and a float differ


def test_every_combination_times_every_seed_is_a_trial(tmp_path):
    path = write_sweep(tmp_path / "s.toml", tasks=["afqmc", "tnews"], models=["hf-tiny", "baseline"], seeds=[1, 2, 3],
                       grid={"learning_rate": [1e-3, 1e-2], "batch_size": [8, 16, 32]})
    trials = expand(load_sweep(path))
    assert len(trials) == 2 * 2 * 6 * 3 and len({t.id for t in trials}) == len(trials)
    first = trials[0]
    assert (first.task, first.model, first.config, first.seed) == ("afqmc", "hf-tiny",
                                                                   {"learning_rate": 1e-3, "batch_size": 8}, 1)


def make_summary(tmp_path: Path, scores: dict[tuple[float, int], float | None], seeds=(1, 2)) -> Summary:
    """A summary of afqmc × baseline × learning_rate in (0.1, 0.2, 0.3) × seeds, with the given results
    (``None``: that trial failed)."""
    path = write_sweep(tmp_path / "s.toml", tasks=["afqmc"], models=["baseline"], seeds=list(seeds),
                       grid={"learning_rate": [0.1, 0.2, 0.3]})
    spec = load_sweep(path)
    trials = expand(spec)
    summary = Summary(spec, trials, tmp_path / "out", "local")
    for trial in trials:
        value = scores.get((trial.config["learning_rate"], trial.seed), "pending")
        if value == "pending":
            continue
        summary.record({"id": trial.id, "status": "failed" if value is None else "complete", "primary": value,
                        "primary_metric": "accuracy", "error": "boom" if value is None else None, "seconds": 1.0})
    return summary


def test_configs_hold_the_mean_and_std_over_seeds(tmp_path):
    summary = make_summary(tmp_path, {(0.1, 1): 50.0, (0.1, 2): 60.0, (0.2, 1): 70.0, (0.2, 2): 64.0,
                                      (0.3, 1): 90.0, (0.3, 2): None})
    configs = {c["config"]["learning_rate"]: c for c in summary.configs()}
    assert configs[0.1]["mean"] == 55.0 and configs[0.1]["std"] == pytest.approx(statistics.stdev([50.0, 60.0]))
    assert configs[0.2]["mean"] == 67.0 and configs[0.2]["seeds"] == [1, 2]
    assert configs[0.3]["complete"] == 1 and configs[0.3]["trials"] == 2 and configs[0.3]["std"] is None
    best = summary.best()["afqmc"]
    # 0.3's one surviving seed (90) is not compared with configurations whose every seed ran
    assert best["config"] == {"learning_rate": 0.2} and best["mean"] == 67.0
    assert best["submit_seed"] == 1 and best["submit"].endswith("seed-1/afqmc")  # its better dev seed
    assert best["runner_up"]["config"] == {"learning_rate": 0.1}
    counts = summary.counts()
    assert (counts["complete"], counts["failed"], counts["pending"]) == (5, 1, 0)


def test_ties_go_to_the_smaller_spread_then_to_the_first_listed(tmp_path):
    summary = make_summary(tmp_path, {(0.1, 1): 60.0, (0.1, 2): 60.0, (0.2, 1): 50.0, (0.2, 2): 70.0,
                                      (0.3, 1): 60.0, (0.3, 2): 60.0})
    best = summary.best()["afqmc"]
    assert best["config"] == {"learning_rate": 0.1} and best["runner_up"]["config"] == {"learning_rate": 0.3}
    assert best["submit_seed"] == 1  # equal seeds: the first listed


def test_a_task_with_no_fully_run_configuration_has_no_best(tmp_path):
    summary = make_summary(tmp_path, {(0.1, 1): 60.0, (0.2, 1): None}, seeds=(1, 2))
    assert summary.best() == {}
    data = summary.write("running")
    assert not (tmp_path / "out" / "submit.json").exists() and data["counts"]["pending"] == 4


def test_the_screen_table_marks_the_best_and_lists_failures(tmp_path):
    summary = make_summary(tmp_path, {(0.1, 1): 50.0, (0.1, 2): 60.0, (0.2, 1): 70.0, (0.2, 2): 64.0,
                                      (0.3, 1): 90.0, (0.3, 2): None})
    text = table(summary.as_dict("failed"))
    row = next(line for line in text.splitlines() if "learning_rate=0.2" in line)
    assert "67.00 ± 4.24" in row and row.rstrip().endswith("*")
    assert "failed: afqmc--baseline--learning_rate-0.3--seed-2: boom" in text


def result(trial: str, status: str, primary: float | None = None, error: str | None = None) -> dict:
    return {"id": trial, "status": status, "primary": primary, "primary_metric": "accuracy" if primary else None,
            "error": error, "seconds": 1.0}


def test_interrupted_trials_are_not_counted_done_and_an_interrupt_shows_no_rate_or_time_left():
    from clue_sweep.command import Progress

    lines: list[str] = []
    progress = Progress(4, 1, lines.append)  # one trial already complete from an earlier sweep
    progress(result("a", "complete", 50.0))
    progress(result("b", "failed", error="boom"))  # a failed trial is finished: it counts as done
    progress(result("c", "interrupted", error="interrupted: kept unfinished"))
    progress(result("d", "interrupted", error="interrupted: kept unfinished"))
    assert lines[0].startswith("[sweep] 2/4 done · a complete accuracy 50.00 · ") and "trials/min" in lines[0]
    assert lines[1].startswith("[sweep] 3/4 done, 1 failed · b failed: boom · ") and "left" in lines[1]
    for line, trial in zip(lines[2:], "cd"):
        assert line.startswith(f"[sweep] 3/4 done, 1 failed · {trial} interrupted: kept unfinished · "), line
        assert "trials/min" not in line and "left" not in line and "interrupted" in line.split(" · ")[-1], line
