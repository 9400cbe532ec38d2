"""The report's DataCLUE section at its edges (review): two runs that each look raw, and a test_public of a
single example (every bootstrap draw would be the observed difference: the comparison's reason, no interval).

Runs of the deterministic char model of tests/dataclue through the CLI, as in test_data_centric.py.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from clue_core.kernel import Kernel
from tests.report.test_data_centric import SAMPLE, dataclue_kernel, modified_copy, report_of


@pytest.fixture
def kernel(isolated_kernel: Kernel) -> Kernel:
    return dataclue_kernel(isolated_kernel)


def _run(run_cli, kernel: Kernel, out: Path, *data: str) -> Path:
    result = run_cli("run", "dataclue-cic", "--model", "dc-char", *data, "-o", out, kernel=kernel)
    assert result.exit_code == 0, result.output
    return out / "dataclue-cic"


def test_two_runs_on_different_data_that_each_look_raw_are_one_line(run_cli, kernel, tmp_path) -> None:
    sample = _run(run_cli, kernel, tmp_path / "sample", "--sample")
    raw = modified_copy(tmp_path / "datasets" / "raw_cic", add_test=False)  # raw_cic/, but not the sample's bytes
    official = _run(run_cli, kernel, tmp_path / "official", "--data-dir", str(tmp_path / "datasets"))
    yours = _run(run_cli, kernel, tmp_path / "yours", "--data-dir", str(modified_copy(tmp_path / "data-yours")))
    assert raw.is_dir()
    report, _, _ = report_of(run_cli, kernel, tmp_path / "report", sample, official, yours)
    (block,) = report["dataclue"]["tasks"]
    assert block["reason"] == ("cannot tell which run is on the raw data: runs on different data each look raw; "
                               "give clue-core report --baseline RUN")
    assert block["comparisons"] == [] and len(block["others"]) == 3
    named, _, _ = report_of(run_cli, kernel, tmp_path / "named", sample, official, yours,
                            options=("--baseline", str(official)))
    (block,) = named["dataclue"]["tasks"]
    assert block["how"] == "named by --baseline" and len(block["comparisons"]) == 2


def _one_line_test_public(to: Path, *, relabel_every: int) -> Path:
    copy = modified_copy(to, relabel_every=relabel_every, add_test=False)
    lines = (copy / "test_public.json").read_text(encoding="utf-8").splitlines()
    (copy / "test_public.json").write_text(lines[0] + "\n", encoding="utf-8")
    return copy


def test_a_single_test_public_example_is_the_comparisons_reason_not_an_interval(run_cli, kernel, tmp_path) -> None:
    raw = _one_line_test_public(tmp_path / "datasets" / "raw_cic", relabel_every=10_000)  # line 0 relabelled only
    yours = _one_line_test_public(tmp_path / "data-yours", relabel_every=2)
    base = _run(run_cli, kernel, tmp_path / "raw", "--data-dir", str(raw.parent))
    mine = _run(run_cli, kernel, tmp_path / "yours", "--data-dir", str(yours))
    assert json.loads((base / "metrics.json").read_text())["counts"]["test_public"] == 1
    report, _, _ = report_of(run_cli, kernel, tmp_path / "report", base, mine)
    (block,) = report["dataclue"]["tasks"]
    (entry,) = block["comparisons"]
    assert "bootstrap" not in entry, entry
    assert entry["reason"].startswith("only 1 scored example or passage to resample"), entry["reason"]
    shutil.rmtree(tmp_path / "report")
    result = run_cli("bootstrap", mine, base, "--split", "test_public", kernel=kernel)
    assert result.exit_code == 2 and result.output.startswith("error: only 1 test_public example"), result.output
    assert SAMPLE.is_dir()
