"""Shared by the sweep benchmarks: write a sweep file and time ``clue-core sweep`` in a fresh process."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

CLI = [sys.executable, "-m", "clue_core"]


def write_sweep(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def cpu_seconds() -> float:
    """User + system CPU seconds of every finished child process so far (the sweep and its workers)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def time_sweep(sweep: Path, *flags: str) -> tuple[float, dict[str, Any]]:
    """Wall seconds of one whole ``clue-core sweep`` (start-up, workers, trials) into a fresh folder;
    the summary gets ``cpu_seconds``, what the command and its workers used (more CPU for the same
    trials is work the executor added; less wall for the same CPU is parallelism)."""
    with tempfile.TemporaryDirectory(prefix="clue-sweep-bench-") as folder:
        env = {**os.environ, "CLUE_HOME": str(Path(folder) / "home")}
        started, cpu = time.perf_counter(), cpu_seconds()
        subprocess.run([*CLI, "sweep", str(sweep), "-o", str(Path(folder) / "out"), *flags], check=True, env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        seconds = time.perf_counter() - started
        summary = json.loads((Path(folder) / "out" / "summary.json").read_text(encoding="utf-8"))
        summary["cpu_seconds"] = cpu_seconds() - cpu
    if summary["counts"]["complete"] != summary["counts"]["total"]:
        raise SystemExit(f"not every trial completed: {summary['counts']}")
    return seconds, summary


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.1f} (1 min), {five:.1f} (5 min) on {os.cpu_count()} CPUs"
