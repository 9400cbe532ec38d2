"""The Ray executor's overhead per trial against the local executor, on the same sweeps.

Baseline-model trials (each trial's own work is a few milliseconds, so what is measured is the
executor) run with ``--executor local --workers 2`` (the baseline) and ``--executor ray
--workers 2`` (a local Ray cluster of 2 CPUs that the sweep starts and stops), each as the whole
command in a fresh process, on a small sweep (8 trials) and a large one (32 trials). The
difference between the two sizes is the cost of 24 more trials: per trial, that is each
executor's marginal cost, and what is left of the small sweep's time is its fixed cost (start-up,
for Ray the cluster's start and stop). Best of ``--repeats``.

    python benchmarks/sweep_ray_overhead.py [--repeats N]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from sweep_common import load, time_sweep, write_sweep

SIZES = (4, 16)  # seeds; two tasks each: 8 and 32 trials


def sweep_text(seeds: int) -> str:
    return (f'tasks = ["afqmc", "tnews"]\nmodels = ["baseline"]\nseeds = {list(range(1, seeds + 1))}\n'
            "sample = true\n[resources]\ncpus = 1\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args()
    flags = {"local": ("--workers", "2"), "ray": ("--executor", "ray", "--workers", "2")}
    best = {(name, seeds): float("inf") for name in flags for seeds in SIZES}
    with tempfile.TemporaryDirectory() as folder:
        for _ in range(args.repeats):
            for seeds in SIZES:
                sweep = write_sweep(Path(folder) / f"sweep-{seeds}.toml", sweep_text(seeds))
                for name, extra in flags.items():  # alternate, so a burst of load hits both alike
                    best[name, seeds] = min(best[name, seeds], time_sweep(sweep, *extra)[0])
    small, large = (2 * s for s in SIZES)
    print(f"baseline-model trials, 2 workers each ({load()})")
    marginal = {}
    for name in flags:
        marginal[name] = (best[name, SIZES[1]] - best[name, SIZES[0]]) / (large - small)
        fixed = best[name, SIZES[0]] - small * marginal[name]
        print(f"{name:5s}: {small} trials {best[name, SIZES[0]]:5.1f} s, {large} trials {best[name, SIZES[1]]:5.1f} s"
              f" -> {marginal[name]:.3f} s per trial, {fixed:.1f} s fixed")
    print(f"ray's overhead per trial against local (the baseline): {marginal['ray'] - marginal['local']:+.3f} s "
          f"({marginal['ray'] / marginal['local']:.2f}× local's per-trial cost)")


if __name__ == "__main__":
    main()
