"""CLI start-up: ``clue-core list`` against ``python -c "import click, pluggy"``.

Both are run alternately in fresh processes; the median wall time of each is printed with
their ratio. Goal: ratio ≤ 2.5 (entry points read from the ``*.dist-info`` folders without importing
importlib.metadata, frozen dataclass specs and the spec checks cost little beside importing the
two libraries the CLI is built on). The median CPU time (user + system) of each and the load
average are printed too: on a shared machine CPU time moves less with the load than wall time does.

    python benchmarks/cli_startup.py [--runs N] [--quick]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

GOAL = 2.5


#: Both commands run as an installed program runs: with bytecode caches. A shell that sets
#: PYTHONDONTWRITEBYTECODE would make every clue-core module compile from source at every start
#: while click and pluggy, installed by pip with their caches, do not: an unfair comparison.
ENV = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}


def time_once(command: list[str]) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user + system) of one run of ``command``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--quick", action="store_true", help="7 runs each")
    args = parser.parse_args()
    runs = 7 if args.quick else args.runs
    script = str(Path(sys.executable).with_name("clue-core"))
    commands = {
        "baseline: python -c 'import click, pluggy'": [sys.executable, "-c", "import click, pluggy"],
        "clue-core list": [script, "list"],
    }
    for command in commands.values():  # warm the file-system cache and write the bytecode caches
        time_once(command)
    load = os.getloadavg()[0]
    samples: dict[str, list[float]] = {name: [] for name in commands}
    cpu: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(runs):
        for name, command in commands.items():
            wall, used = time_once(command)
            samples[name].append(wall)
            cpu[name].append(used)
    medians = {name: statistics.median(values) for name, values in samples.items()}
    cpu_medians = {name: statistics.median(values) for name, values in cpu.items()}
    baseline, ours = medians.values()
    ratio = ours / baseline
    print(f"{'command':<45} {'median ms':>10} {'min ms':>8} {'cpu ms':>8}")
    for name, values in samples.items():
        print(f"{name:<45} {1000 * medians[name]:>10.1f} {1000 * min(values):>8.1f} {1000 * cpu_medians[name]:>8.1f}")
    print(f"\nratio clue-core list / baseline: {ratio:.2f} (goal <= {GOAL}: {'met' if ratio <= GOAL else 'MISSED'})")
    cpu_base, cpu_ours = cpu_medians.values()
    print(f"cpu time ratio: {cpu_ours / cpu_base:.2f}; load average {load:.2f} before, {os.getloadavg()[0]:.2f} after")
    print(f"runs: {runs} each, alternating; python {sys.version.split()[0]}")


if __name__ == "__main__":
    main()
