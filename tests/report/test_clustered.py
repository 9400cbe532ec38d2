"""The report's intervals resample passages for a task whose questions share them (C3 here), from the
records' ``group`` when a run wrote them, else from the task's ``cluster`` on the dev data re-read (a
run made before records named their passage); and the report says which tasks are clustered."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from clue_core import record_write
from clue_core.kernel import Kernel
from clue_report import stats, write_report
from tests.report.conftest import _run


def _report(kernel: Kernel, runs: Path, tmp_path: Path) -> dict:
    return write_report(kernel, [runs], tmp_path / "report", charts=False)


def _run_of(report: dict, task: str) -> dict:
    return next(run for run in report["runs"] if run["task"] == task)


def test_c3_intervals_resample_passages_from_the_data(kernel: Kernel, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """C3's sample dev: questions 1 and 2 share a text; right, right, wrong. Resampling questions (0, 100,
    100) gives [0, 100]; resampling the two passages (100 over 1 question, 100 over 2): [50, 100]. The
    records name no passage (a run from before they did: RECORD_GROUPS off), so the data is read again."""
    monkeypatch.setattr(record_write, "RECORD_GROUPS", False)
    runs = _run(kernel, ["c3", "afqmc"], "baseline", tmp_path / "runs")
    report = _report(kernel, runs, tmp_path)
    c3 = _run_of(report, "c3")
    interval = c3["intervals"]["accuracy"]
    assert c3["clustered"] == {"unit": "passage", "from": "data"}  # these records name no passage
    assert (interval["unit"], interval["units"]) == ("passage", 2)
    assert (interval["low"], interval["high"]) == pytest.approx((50.0, 100.0))
    unclustered = stats.bootstrap_mean([100.0, 100.0, 0.0])
    assert (unclustered.low, unclustered.high) == pytest.approx((0.0, 100.0))  # not what C3 shows
    afqmc = _run_of(report, "afqmc")
    assert "clustered" not in afqmc and afqmc["intervals"]["accuracy"]["unit"] == "example"
    assert report["bootstrap"]["clustered"] == {"c3": "passage"}
    line = ("Intervals are clustered by passage for c3: their questions share it, so whole groups are "
            "resampled, not questions; other tasks' intervals resample examples.")
    assert line in (tmp_path / "report" / "report.md").read_text(encoding="utf-8").splitlines()
    assert line.replace("'", "&#x27;") in (tmp_path / "report" / "index.html").read_text(encoding="utf-8")


def test_records_groups_are_used_and_outlive_the_data(kernel: Kernel, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Records that name their passage are resampled by it, even when the dev data is gone."""
    monkeypatch.setattr(record_write, "RECORD_GROUPS", True)
    runs = _run(kernel, ["c3"], "baseline", tmp_path / "runs")
    report = _report(kernel, runs, tmp_path)
    assert _run_of(report, "c3")["clustered"] == {"unit": "passage", "from": "records"}
    manifest = runs / "c3" / "manifest.json"
    data = json.loads(manifest.read_text(encoding="utf-8"))
    data["data"]["data_dir"] = str(tmp_path / "gone")
    manifest.write_text(json.dumps(data), encoding="utf-8")
    report = _report(kernel, runs, tmp_path)
    c3 = _run_of(report, "c3")
    assert c3["scored_from"] == "records" and c3["clustered"]["from"] == "records"
    assert (c3["intervals"]["accuracy"]["unit"], c3["intervals"]["accuracy"]["units"]) == ("passage", 2)
    assert any("scored from the records alone (no texts)" in w for w in report["warnings"])


def test_a_report_without_clustered_tasks_says_nothing_of_it(kernel: Kernel, tmp_path: Path) -> None:
    runs = _run(kernel, ["afqmc"], "baseline", tmp_path / "runs")
    report = _report(kernel, runs, tmp_path)
    assert report["bootstrap"]["clustered"] == {}
    assert "clustered" not in (tmp_path / "report" / "report.md").read_text(encoding="utf-8")


def broken_cluster(example: object) -> str:
    raise ValueError("no passage here")


def test_a_failing_cluster_function_is_a_note_and_intervals_by_example(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(record_write, "RECORD_GROUPS", False)  # records without groups: the function is asked
    kernel = Kernel()
    runs = _run(kernel, ["c3"], "baseline", tmp_path / "runs")
    kernel.tasks["c3"] = dataclasses.replace(kernel.tasks["c3"], cluster=f"{__name__}:broken_cluster")
    report = _report(kernel, runs, tmp_path)
    c3 = _run_of(report, "c3")
    assert c3["intervals"]["accuracy"]["unit"] == "example" and "clustered" not in c3
    assert any("cluster" in w and "ValueError: no passage here" in w for w in report["warnings"])
