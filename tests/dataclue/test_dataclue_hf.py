"""hf-tiny trains the DataCLUE recipe on a bundled sample (users give --model hf:hfl/rbtl3, the named one).

hf-tiny is not the recipe's model and its size class changes the learning rate, so the run is marked
as not the DataCLUE protocol; the recipe's epochs, length and batch reach the model.
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
    metrics = json.loads((run / "metrics.json").read_text(encoding="utf-8"))
    assert 0.0 <= metrics["test_public"]["macro_f1"] <= 100.0
