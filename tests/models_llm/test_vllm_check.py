"""``benchmarks/vllm_check.py --self-check``: the GPU check's comparison, run on the CPU against the stand-in."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow
SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "vllm_check.py"


def test_self_check_passes_and_reports_each_goal() -> None:
    done = subprocess.run([sys.executable, str(SCRIPT), "--self-check", "--tasks", "afqmc"], capture_output=True,
                          text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    row = next(line for line in done.stdout.splitlines() if line.startswith("afqmc"))
    assert "max |Δ| <= 0.0001: met" in row and "agree >= 99%: met" in row
    assert done.stdout.rstrip().endswith("all goals met")
