"""End to end through the CLI with hf-tiny (users give --model hf:hfl/rbtl3): two runs of dataclue-cic, one on the
bundled raw sample and one on a copy with relabelled train lines; ``clue-core bootstrap A B --split test_public``
and ``clue-core report A B`` give the same difference, interval and p-value.

hf-tiny at its smallest learns next to nothing of 118 labels from 40 lines, so both score near 0: the
numbers' equality away from 0 is held by test_data_centric.py (the deterministic test model).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clue_core.kernel import Kernel
from tests.report.test_data_centric import MARK, bootstrap_json, dataclue_kernel, modified_copy, report_of

pytestmark = pytest.mark.slow

#: hf-tiny's smallest backbone, one epoch (the recipe's 15 would take minutes of CPU; the run is marked anyway).
TINY = ("epochs=1", "progress=false", "tiny_hidden_size=32", "tiny_num_layers=1", "tiny_intermediate_size=64",
        "tiny_num_heads=2")


def test_hf_tiny_runs_on_raw_and_relabelled_data_in_bootstrap_and_report(run_cli, isolated_kernel: Kernel,
                                                                          tmp_path: Path) -> None:
    pytest.importorskip("torch")
    import clue_models_hf.hooks

    isolated_kernel.register(clue_models_hf.hooks, "clue-models-hf", distribution="clue-models-hf")
    kernel = dataclue_kernel(isolated_kernel)
    sets = [arg for value in TINY for arg in ("--set", value)]
    data = modified_copy(tmp_path / "relabelled", relabel_every=2, add_test=False)
    runs = {}
    for name, where in (("raw", ("--sample",)), ("yours", ("--data-dir", str(data)))):
        result = run_cli("run", "dataclue-cic", "--model", "hf-tiny", *where, "-o", tmp_path / name, *sets,
                         kernel=kernel)
        assert result.exit_code == 0, result.output
        runs[name] = tmp_path / name / "dataclue-cic"
    expected = bootstrap_json(run_cli, kernel, runs["yours"], runs["raw"])
    assert expected["split"] == "test_public" and expected["examples"] == 16
    report, page, md = report_of(run_cli, kernel, tmp_path / "report", runs["raw"], runs["yours"])
    (block,) = report["dataclue"]["tasks"]
    assert block["model"] == "hf-tiny" and block["baseline"]["paths"] == [str(runs["raw"])]
    (yours,) = block["comparisons"]
    for key in ("difference", "low", "high", "p_value", "examples", "samples", "seed"):
        assert yours["bootstrap"][key] == expected[key], key
    assert yours["score"] == expected["a"]["score"] and block["baseline"]["score"] == expected["b"]["score"]
    assert any(MARK in mark and "epochs 1 (recipe 15)" in mark for mark in yours["marks"]), yours["marks"]
    assert "id='dataclue'" in page and "## DataCLUE: your data vs the raw data" in md
    shown = run_cli("bootstrap", runs["yours"], runs["raw"], "--split", "test_public", kernel=kernel)
    assert shown.output.startswith("dataclue-cic test_public macro_f1: A ")
    assert json.loads((runs["yours"] / "manifest.json").read_text())["data"]["source"] != "sample"
