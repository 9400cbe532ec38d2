"""Shared fixtures of the clue-tasks-ner tests: the sample folder, the scorer checks, a kernel with the plugin."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import clue_tasks_ner.hooks as ner_hooks
from clue_core.kernel import Kernel
from tests.ner.dictionary_model import Plugin

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "plugins" / "clue-tasks-ner" / "clue_tasks_ner" / "samples" / "cluener2020"
DATA = Path(__file__).resolve().parent / "data"


def official() -> dict[str, Any]:
    """What the official score.py printed for each cut file against the dev sample (data/README.md)."""
    return json.loads((DATA / "official_scores.json").read_text(encoding="utf-8"))


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture
def kernel(isolated_kernel: Kernel) -> Kernel:
    """An isolated kernel with clue-tasks-ner and the tests' dictionary model."""
    isolated_kernel.register(ner_hooks, "clue-tasks-ner", distribution="clue-tasks-ner")
    isolated_kernel.register(Plugin(), "ner-dictionary")
    assert all(p.status == "ok" for p in isolated_kernel.plugins), [p.error for p in isolated_kernel.plugins]
    return isolated_kernel
