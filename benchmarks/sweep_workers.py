"""A sweep of 8 hf-tiny trials on 2 local workers against the same trials one after another (1 worker).

Both run the whole ``clue-core sweep`` command in a fresh process into a fresh folder, so each
side pays its start-up and its workers' imports (torch). The baseline is ``--workers 1``: the
same executor, one trial at a time. Goal: ≥ 1.6× on 2 cores. Each side's best of ``--repeats``
is kept (other processes only ever slow a run down). ``--steps`` sets each trial's training
steps: a trial of a real study trains for minutes, so the default (200 steps, about ten seconds
here) keeps a worker's start-up (importing torch) from standing in for the trials themselves.

    python benchmarks/sweep_workers.py [--repeats N] [--steps N]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from sweep_common import load, time_sweep, write_sweep

GOAL = 1.6
SWEEP = """
tasks = ["afqmc", "tnews"]
models = ["hf-tiny"]
seeds = [1, 2]
sample = true
[settings]
progress = false
max_steps = {steps}
tiny_hidden_size = 64
tiny_num_layers = 2
[grid]
learning_rate = [1e-3, 5e-3]
[resources]
cpus = 1
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--steps", type=int, default=200, help="training steps of each trial")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        sweep = write_sweep(Path(folder) / "sweep.toml", SWEEP.format(steps=args.steps))
        one = two = (float("inf"), 0.0)
        for _ in range(args.repeats):  # alternate, so a burst of load hits both sides alike
            seconds, summary = time_sweep(sweep, "--workers", "1")
            one = min(one, (seconds, summary["cpu_seconds"]))
            seconds, summary = time_sweep(sweep, "--workers", "2")
            two = min(two, (seconds, summary["cpu_seconds"]))
    trials = summary["counts"]["total"]
    print(f"{trials} hf-tiny trials of {args.steps} steps ({load()})")
    print(f"baseline, one after another (--workers 1): {one[0]:6.1f} s wall, {one[1]:6.1f} s CPU")
    print(f"2 local workers (--workers 2):             {two[0]:6.1f} s wall, {two[1]:6.1f} s CPU")
    one, two = one[0], two[0]
    print(f"speed-up: {one / two:.2f}× (goal ≥ {GOAL}×)")


if __name__ == "__main__":
    main()
