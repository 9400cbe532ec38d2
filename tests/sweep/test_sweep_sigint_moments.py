"""A SIGINT at any moment of a real sweep's life stops it and every worker it started, exit 130.

``held_sweep.py`` holds the sweep's own process at one point (``$SWEEP_HOLD_AT``): while it plans,
while it writes its first summary (no worker yet), between starting its first worker and its
second, and while it writes the summary after a trial ended with other trials running. The test
sends SIGINT to the sweep alone (``kill -INT``), then checks the exit, that no process of the
sweep's session is left, what the summary says, and that a rerun completes every trial.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from .conftest import summary, write_sweep
from .processes import HELD, sweep_process, wait_for

pytestmark = pytest.mark.slow

#: (hold point, seeds whose trials do not wait in training, the statuses the summary must end with)
MOMENTS = [
    ("planning", "", []),  # nothing written: no summary at all
    ("first-summary", "", ["pending", "pending", "pending"]),
    ("spawning", "", ["interrupted", "pending", "pending"]),  # the first worker is in its trial
    ("trial-summary", "1", ["complete", "interrupted", "interrupted"]),
    ("finalizer", "", ["interrupted", "interrupted", "pending"]),  # the KeyboardInterrupt is lost: the stop is not
]


def start_env(tmp_path: Path, point: str, free: str) -> tuple[dict[str, str], Path]:
    hold = tmp_path / "hold"
    hold.write_text("", encoding="utf-8")
    return {**os.environ, "SWEEP_HOLD": str(hold), "SWEEP_HOLD_AT": point, "SWEEP_HOLD_FREE_SEEDS": free}, hold


@pytest.mark.parametrize(("point", "free", "statuses"), MOMENTS, ids=[m[0] for m in MOMENTS])
def test_a_sigint_at_any_moment_stops_the_sweep_and_its_workers(run_cli, tmp_path, point, free, statuses):
    out = tmp_path / "out"
    sweep = write_sweep(tmp_path / "s.toml", tasks=["afqmc"], models=["baseline"], seeds=[1, 2, 3], sample=True)
    env, hold = start_env(tmp_path, point, free)
    with sweep_process([HELD, "sweep", sweep, "-o", out, "--workers", "2"], env, tmp_path / "sweep.out") as process:
        reached = tmp_path / f"hold-at-{point}"
        wait_for(f"the sweep reaches {point}", reached.exists, process)
        # trials in training when it is interrupted (trial-summary: seed 1 ended, seeds 2 and 3 run)
        trials = {"spawning": 1, "trial-summary": 2, "finalizer": 2}.get(point, 0)
        wait_for(f"{trials} trial(s) in training", lambda: len(list(tmp_path.glob("hold.*"))) == trials, process)
        process.interrupt()
        code = process.wait_exit()
        output = process.output()
        assert code == 130, output
        if point == "finalizer":  # Python dropped the KeyboardInterrupt raised in the __del__
            assert "Exception ignored in" in output and "KeyboardInterrupt" in output, output
        else:
            assert "Traceback" not in output and "Exception ignored" not in output, output
        process.wait_session_gone()  # no worker, no orphan: the whole session is gone
    last = output.strip().splitlines()[-1]
    if point == "planning":
        assert last == "error: interrupted" and not out.exists(), output
    else:
        assert last.startswith("interrupted: ") and last.endswith("the same command resumes the sweep"), output
        data = summary(out)
        assert data["status"] == "interrupted", data["status"]
        rows = sorted(data["trials"], key=lambda t: t["seed"])
        assert [t["status"] for t in rows] == statuses, output
        for row in rows:  # an interrupted trial was stopped by its worker, not killed: the kernel kept it
            if row["status"] == "interrupted":
                log = (out / row["id"] / "trial.log").read_text(encoding="utf-8")
                assert log.rstrip().splitlines()[-1].startswith("--- interrupted: interrupted: afqmc is kept"), log
    hold.unlink()
    again = run_cli("sweep", sweep, "-o", out, "--workers", "0")
    assert again.exit_code == 0, again.output
    assert [t["status"] for t in summary(out)["trials"]] == ["complete"] * 3


def test_workers_that_ignore_sigint_and_sigterm_are_killed_and_the_sweep_still_exits(run_cli, tmp_path):
    """A trial stuck in native code hears no signal: after the grace time the sweep kills its worker
    rather than wait for it (``multiprocessing`` joins its children at exit without a time limit)."""
    out = tmp_path / "out"
    sweep = write_sweep(tmp_path / "s.toml", tasks=["afqmc"], models=["baseline"], seeds=[1, 2, 3], sample=True)
    env, hold = start_env(tmp_path, "", "")
    env.update(SWEEP_HOLD_STUBBORN="1", SWEEP_GRACE="1")
    with sweep_process([HELD, "sweep", sweep, "-o", out, "--workers", "2"], env, tmp_path / "sweep.out") as process:
        wait_for("both workers reach training", lambda: len(list(tmp_path.glob("hold.*"))) == 2, process)
        process.interrupt()
        assert process.wait_exit() == 130, process.output()
        process.wait_session_gone()
    assert sorted(t["status"] for t in summary(out)["trials"]) == ["interrupted", "interrupted", "pending"]
    hold.unlink()
    again = run_cli("sweep", sweep, "-o", out, "--workers", "0")
    assert again.exit_code == 0 and [t["status"] for t in summary(out)["trials"]] == ["complete"] * 3
