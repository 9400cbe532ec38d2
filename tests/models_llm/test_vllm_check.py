"""``benchmarks/vllm_check.py``: its self-check (the GPU check's comparison, on the CPU against the stand-in), and
what it says where it cannot run (no vLLM, no GPU, a hub id): one line, nothing installed or downloaded."""

from __future__ import annotations

import importlib.machinery
import importlib.util
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


def load_script():
    spec = importlib.util.spec_from_file_location("vllm_check_script", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def fake_find_spec(vllm_installed: bool):
    real = importlib.util.find_spec

    def find_spec(name, *args, **kwargs):
        if name == "vllm":
            return importlib.machinery.ModuleSpec("vllm", None) if vllm_installed else None
        return real(name, *args, **kwargs)
    return find_spec


def test_without_vllm_it_says_so_in_one_line_and_installs_nothing(monkeypatch, capsys) -> None:
    script = load_script()
    monkeypatch.setattr(importlib.util, "find_spec", fake_find_spec(vllm_installed=False))
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: pytest.fail(f"ran {a}"))  # no pip install
    monkeypatch.setattr(subprocess, "check_call", lambda *a, **k: pytest.fail(f"ran {a}"))
    assert script.main(["--model", "Qwen/Qwen2.5-0.5B"]) == 0
    out = capsys.readouterr()
    assert out.out.startswith("n/a: vLLM is not installed") and len(out.out.splitlines()) == 1 and not out.err


def test_a_hub_id_is_refused_in_one_line_before_anything_loads(monkeypatch, capsys, tmp_path) -> None:
    import torch

    script = load_script()
    monkeypatch.setattr(importlib.util, "find_spec", fake_find_spec(vllm_installed=True))
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(script, "run", lambda *a, **k: pytest.fail("scored with a hub id"))
    for model in ("Qwen/Qwen2.5-0.5B", None, str(tmp_path)):
        argv = ["--model", model] if model else []
        assert script.main(argv) == 2
        out = capsys.readouterr()
        assert not out.out and len(out.err.splitlines()) == 1 and out.err.startswith("error: --model"), out.err
    (tmp_path / "config.json").write_text("{}", encoding="utf-8")
    assert script.model_folder_problem(str(tmp_path)) is None
