"""Every FewCLUE task asked of a language model: the offline ``llm-tiny``, zero-shot, on its sample.

The tasks' prompts (answer words, CHID's choices) must make a complete run through
clue-models-llm, and the run must score test_public as it scores dev (``scored_splits``):
metrics.json holds both, and the test_public records are written. ``--limit 3`` keeps the
nine runs short (llm-tiny is a real, if tiny, transformer on the CPU).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fewclue.helpers import NAMES

pytestmark = pytest.mark.slow


def test_llm_tiny_runs_every_fewclue_task(run_cli, tmp_path: Path) -> None:
    pytest.importorskip("clue_models_llm", reason="clue-models-llm (llm-tiny) is not installed")
    out = tmp_path / "llm"
    result = run_cli("run", *NAMES, "--model", "llm-tiny", "--sample", "--limit", "3", "--set", "shots=0",
                     "-o", out, "--cache", tmp_path / "cache")
    assert result.exit_code == 0, result.output
    for name in NAMES:
        metrics = json.loads((out / name / "metrics.json").read_text(encoding="utf-8"))
        assert metrics["model_category"] == "llm" and metrics["report_settings"]["shots"] == 0, name
        assert metrics["scored_splits"] == ["test_public"], name
        for split in ("dev", "test_public"):
            assert 0 <= metrics[split]["accuracy"] <= 100, (name, split)
        assert metrics["primary"] == metrics["dev"]["accuracy"]
        assert metrics["counts"]["dev"] == 3 and metrics["counts"]["test_public"] >= 1, (name, metrics["counts"])
        assert (out / name / "predictions" / "test_public.jsonl").is_file(), name
