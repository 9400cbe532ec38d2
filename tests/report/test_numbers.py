"""Every number in report.json, recomputed from the runs' files (see tests/report/recompute.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clue_report import write_report
from tests.report.fixtures import COMPARISON
from tests.report.recompute import check_comparison, check_report


def _report(folder: Path) -> dict:
    return json.loads((folder / "report.json").read_text(encoding="utf-8"))


@pytest.mark.slow
def test_demo_report(demo_report: Path, kernel) -> None:
    report = _report(demo_report)
    check_report(report, kernel)
    assert [t["name"] for t in report["tasks"]] == ["afqmc", "cmrc2018", "chid", "c3"]
    [row] = report["rows"]
    assert row["label"] == "hf-tiny · sample" and row["kind"] == "encoder" and not row["comparable"]
    assert row["groups"]["CLUE 1.1 reading comprehension"]["complete"]
    assert not row["groups"]["CLUE 1.1 classification"]["complete"]
    chid = next(r for r in report["runs"] if r["task"] == "chid")
    assert chid["intervals"]["accuracy"]["unit"] == "passage"  # CHID resamples passages, not blanks
    assert chid["intervals"]["accuracy"]["units"] < chid["counts"]["dev"]
    assert any("not comparable" in w for w in report["warnings"])


def test_baseline_report_without_charts(baseline_runs: Path, kernel, tmp_path: Path) -> None:
    report = write_report(kernel, [baseline_runs], tmp_path, charts=False)
    check_report(report, kernel)
    assert report == _report(tmp_path)
    tnews = next(r for r in report["runs"] if r["task"] == "tnews")
    assert len(tnews["analysis"]["confusion"]["labels"]) == 15
    assert "macro_f1" in tnews["intervals"] and "low" in tnews["intervals"]["macro_f1"]


def test_llm_and_superclue_report(llm_report: Path, llm_kernel) -> None:
    report = _report(llm_report)
    check_report(report, llm_kernel)
    [comparison] = report["comparisons"]
    check_comparison(comparison, COMPARISON)
    labels = [row["label"] for row in report["rows"]]
    assert labels[0] == "llm:Qwen-7B-Chat · generate, 0-shot"  # the one on full dev data comes first
    assert "llm:Qwen-7B-Chat · loglikelihood, 5-shot · sample" in labels
    full = report["rows"][0]
    assert full["comparable"] and full["kind"] == "LLM" and full["size"] == "7B"
    assert full["cells"]["afqmc"]["seeds"] == [1, 2] and full["cells"]["afqmc"]["seed_spread"]["accuracy"]["n"] == 2
    [board] = [b for t in report["tasks"] if t["name"] == "afqmc" for b in t["boards"] if b["mode"] == "generate"]
    ranked = [(e["kind"], e.get("rank")) for e in board["entries"]]
    assert ("published", 1) in ranked or ("published", 2) in ranked
    assert sum(1 for e in board["entries"] if e["kind"] == "run" and "rank" in e) == 1
    assert any(e["kind"] == "run" and not e["comparable"] for e in board["entries"])  # the sample run, unranked
    fine_tuned = [b for t in report["tasks"] if t["name"] == "afqmc" for b in t["boards"] if b["mode"] == "fine-tuned"]
    assert all(e["kind"] == "published" for b in fine_tuned for e in b["entries"])  # LLM runs never beside those
