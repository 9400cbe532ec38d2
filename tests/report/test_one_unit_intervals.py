"""One example or passage to resample gives no interval in the report (every resample is the same):
a reason, as ``clue-core bootstrap`` refuses it and metrics.json's clustered interval is null."""

from __future__ import annotations

from pathlib import Path

from clue_core.kernel import Kernel
from clue_report import write_report
from tests.report.conftest import _run


def test_a_run_of_one_passage_has_a_reason_not_an_interval(kernel: Kernel, tmp_path: Path) -> None:
    runs = _run(kernel, ["c3"], "baseline", tmp_path / "runs", limit=1)
    report = write_report(kernel, [runs], tmp_path / "report", charts=False)
    c3 = next(run for run in report["runs"] if run["task"] == "c3")
    accuracy = c3["intervals"]["accuracy"]
    assert "low" not in accuracy and accuracy["reason"] == "one passage only: no interval", accuracy


def test_two_passages_still_have_an_interval(kernel: Kernel, tmp_path: Path) -> None:
    runs = _run(kernel, ["c3"], "baseline", tmp_path / "runs")
    report = write_report(kernel, [runs], tmp_path / "report", charts=False)
    c3 = next(run for run in report["runs"] if run["task"] == "c3")
    assert c3["intervals"]["accuracy"]["units"] == 2 and "reason" not in c3["intervals"]["accuracy"]
