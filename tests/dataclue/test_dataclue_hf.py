"""hf-tiny and llm-tiny on bundled samples (users give --model hf:hfl/rbtl3, the named checkpoint).

hf-tiny is not the recipe's model and its size class changes the learning rate, so the run is marked
as not the DataCLUE protocol; the recipe's epochs, length and batch reach the model, and it predicts with the
last epoch's model (``keep=last``), as the recipe does.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clue_tasks_dataclue.protocol import MARK

pytestmark = pytest.mark.slow


def test_hf_tiny_on_the_sample(run_cli, tmp_path: Path) -> None:
    pytest.importorskip("torch")
    from clue_core.kernel import Kernel

    result = run_cli("run", "dataclue-triclue", "--model", "hf-tiny", "--sample", "-o", tmp_path,
                     "--set", "epochs=2", kernel=Kernel())
    assert result.exit_code == 0, result.output
    run = tmp_path / "dataclue-triclue"
    manifest = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
    mark = next(n for n in manifest["notes"] if MARK in n)
    assert "epochs 2 (recipe 15)" in mark and "learning_rate" in mark
    assert manifest["settings"]["max_length"] == 32 and manifest["settings"]["batch_size"] == 64
    # the recipe predicts with the last epoch's model: so does the run (hf's keep=last)
    assert manifest["settings"]["keep"] == "last" and "keep" not in mark
    kept = json.loads((run / "model" / "clue_model.json").read_text(encoding="utf-8"))["kept"]
    state = json.loads((run / "training" / "trainer_state.json").read_text(encoding="utf-8"))
    assert kept == {"checkpoint": "last", "step": state["global_step"], "epoch": 2}
    metrics = json.loads((run / "metrics.json").read_text(encoding="utf-8"))
    assert 0.0 <= metrics["test_public"]["macro_f1"] <= 100.0


def test_llm_tiny_on_the_sample_is_marked_as_another_model(run_cli, tmp_path: Path) -> None:
    """A language model can be asked every DataCLUE task (the task's prompt); it is not the protocol's model."""
    pytest.importorskip("torch")
    from clue_core.kernel import Kernel

    result = run_cli("run", "dataclue-qbqtc", "--model", "llm-tiny", "--sample", "-o", tmp_path, kernel=Kernel())
    assert result.exit_code == 0, result.output
    manifest = json.loads((tmp_path / "dataclue-qbqtc/manifest.json").read_text(encoding="utf-8"))
    assert f"train: {MARK}: model is not hf:hfl/rbtl3" in manifest["notes"]
    metrics = json.loads((tmp_path / "dataclue-qbqtc/metrics.json").read_text(encoding="utf-8"))
    assert set(metrics["test_public"]) == {"macro_f1", "micro_f1"}
