"""``python held_sweep.py sweep …``: clue-core whose baseline trials wait while ``$SWEEP_HOLD`` exists.

The subprocess tests signal a real sweep (SIGINT, SIGKILL) while its trials are inside training.
The patch is made at import, outside ``__main__``: the local executor's ``spawn`` workers import
this file as their main module, so each worker's trials wait too. Each trial that reaches
training writes ``$SWEEP_HOLD.<pid>``, so the test knows which processes run trials and when.
``$SWEEP_HOLD_FREE_SEEDS`` (``1,3``) names seeds whose trials do not wait. With
``$SWEEP_HOLD_STUBBORN`` set, a held trial ignores SIGINT and SIGTERM (a trial stuck in native
code), and ``$SWEEP_GRACE`` shortens the seconds the sweep gives its workers to stop.

``$SWEEP_HOLD_AT`` holds the sweep's own process at one moment of its life instead, for a test
to interrupt it there; it writes ``$SWEEP_HOLD-at-<point>`` and waits while ``$SWEEP_HOLD`` exists:

* ``planning``: while the kernel plans the trials (nothing written yet, no worker);
* ``first-summary``: writing the first summary.json (the folder locked, no worker yet);
* ``spawning``: between starting the first worker and the second;
* ``trial-summary``: writing summary.json after a trial ended, while other trials run;
* ``finalizer``: inside a ``__del__`` run by the sweep's wait loop once two trials run, where
  Python drops the KeyboardInterrupt of a SIGINT ("Exception ignored in …").
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Any

from clue_builtin import baseline

_fit = baseline.BaselineLearner.fit
FREE = {int(seed) for seed in os.environ.get("SWEEP_HOLD_FREE_SEEDS", "").split(",") if seed.strip()}


def held_fit(self, train, dev, context):
    if context.seed not in FREE:
        hold = Path(os.environ["SWEEP_HOLD"])
        if os.environ.get("SWEEP_HOLD_STUBBORN"):
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        Path(f"{hold}.{os.getpid()}").write_text("training\n", encoding="utf-8")
        while hold.exists():
            time.sleep(0.1)
    return _fit(self, train, dev, context)


def hold() -> None:
    """Make this process's baseline trials wait (the ``sitecustomize`` of the Ray test calls it in Ray's workers)."""
    baseline.BaselineLearner.fit = held_fit


def wait_at(point: str) -> None:
    """Say the sweep reached ``point`` and wait there while the hold file exists."""
    hold = Path(os.environ["SWEEP_HOLD"])
    Path(f"{hold}-at-{point}").write_text(f"{os.getpid()}\n", encoding="utf-8")
    while hold.exists():
        time.sleep(0.1)


def hold_sweep_at(point: str) -> None:
    """Patch the sweep's own process so that it waits once at ``point`` (see the module)."""
    from clue_sweep import command, local
    from clue_sweep import summary as summary_module

    if point == "planning":
        plan = command.plan_trials

        def held_plan(*args: Any, **kwargs: Any) -> None:
            wait_at(point)
            plan(*args, **kwargs)

        command.plan_trials = held_plan
    elif point == "spawning":
        start = local._Pool.start_worker

        def held_start(self: Any) -> None:
            if len(self.processes) == 1:
                wait_at(point)
            start(self)

        local._Pool.start_worker = held_start
    elif point in ("first-summary", "trial-summary"):
        write, waited = summary_module.write_json, []

        def held_write(path: Path, data: Any, **options: Any) -> None:
            counts = data.get("counts", {}) if isinstance(data, dict) else {}
            ran = counts.get("complete", 0) + counts.get("failed", 0) > counts.get("reused", 0)
            if Path(path).name == summary_module.SUMMARY and not waited and (point == "first-summary" or ran):
                waited.append(path)
                wait_at(point)
            write(path, data, **options)

        summary_module.write_json = held_write
    elif point == "finalizer":
        dead, waited = local._Pool.dead, []

        class Finalized:
            def __del__(self) -> None:
                wait_at(point)

        def held_dead(self: Any) -> list[Any]:
            if len(self.running) == 2 and not waited:
                waited.append(True)
                Finalized()  # dropped at once: its __del__ waits, and a KeyboardInterrupt there is lost
            return dead(self)

        local._Pool.dead = held_dead
    else:
        raise SystemExit(f"SWEEP_HOLD_AT: unknown point {point!r}")


hold()

if __name__ == "__main__":
    if os.environ.get("SWEEP_HOLD_AT"):
        hold_sweep_at(os.environ["SWEEP_HOLD_AT"])
    if os.environ.get("SWEEP_GRACE"):
        from clue_sweep import local

        local.GRACE = float(os.environ["SWEEP_GRACE"])

    from clue_core.cli import main

    main()
