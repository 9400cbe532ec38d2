"""FewCLUE in the report: test_public beside dev, FewCLUE overall on test_public, the PET baselines
beside the run of the same pair, a ``split=all`` family as one row (mean ± std over splits 0–4).

Runs are real ones (``--model baseline`` through the CLI on the bundled samples, or on a copy
of a sample standing for the full data). A run trained with PET is stood for by a baseline run
whose ``report_settings`` say ``method: pet``, as clue-models-hf's ``--set method=pet`` records it.
"""

from __future__ import annotations

import json
import shutil
import statistics
from pathlib import Path
from typing import Any

import pytest

from clue_core.data import sample_dir
from clue_core.kernel import Kernel
from clue_report import write_report
from clue_report.groups import average_groups
from clue_report.summary import summary_text
from tests.report import recompute

TASKS = ("fewclue-eprstmt", "fewclue-bustm")
FEWCLUE = "FewCLUE overall"
#: The numbers a FewCLUE report adds, each checked by this module.
FEWCLUE_VERIFIED = {
    "runs[].scored.test_public.accuracy", "runs[].scored.test_public.macro_f1",
    "rows[].cells.*.scored.test_public.accuracy", "rows[].cells.*.scored.test_public.macro_f1",
    "tasks[].published[].value", "tasks[].scored_boards[].entries[].value", "tasks[].scored_boards[].entries[].rank",
    "tasks[].scored_boards[].entries[].index", "tasks[].scored_boards[].entries[].shots",
}


@pytest.fixture(scope="module")
def kernel() -> Kernel:
    return Kernel()


def _metrics(run: dict[str, Any]) -> dict[str, Any]:
    return json.loads((Path(run["path"]) / "metrics.json").read_text(encoding="utf-8"))


def _run(run_cli, *args: Any) -> None:
    result = run_cli("run", *args)
    assert result.exit_code == 0, result.output


def test_scored_splits_and_the_fewclue_group(run_cli, kernel: Kernel, tmp_path: Path) -> None:
    _run(run_cli, *TASKS, "--model", "baseline", "--sample", "-o", tmp_path / "runs")
    report = write_report(kernel, [tmp_path / "runs"], tmp_path / "report", charts=False)
    recompute.check_header(report)
    for check in (recompute.check_runs, recompute.check_analysis, recompute.check_tasks):
        check(report, kernel)  # as for CLUE runs (check_rows recomputes groups on dev: the group is checked here)
    assert not recompute.numeric_patterns(report) - recompute.VERIFIED - FEWCLUE_VERIFIED
    assert report["groups"][FEWCLUE] == [s.name for s in kernel.tasks.values()
                                         if any(lb.benchmark == "FewCLUE" for lb in s.leaderboards)]
    assert len(report["groups"][FEWCLUE]) == 9
    for run in report["runs"]:
        assert run["scored"] == {"test_public": _metrics(run)["test_public"]}
    [row] = report["rows"]
    primaries = []
    for task in TASKS:
        cell = row["cells"][task]
        [run] = [r for r in report["runs"] if r["id"] in cell["runs"]]
        assert cell["scored"] == run["scored"] and "scored_spread" not in cell
        primaries.append(_metrics(run)["test_public"]["accuracy"])
    group = row["groups"][FEWCLUE]
    assert group["split"] == "test_public" and group["tasks"] == list(TASKS) and not group["complete"]
    assert group["score"] == pytest.approx(statistics.fmean(primaries))  # test_public, not dev
    assert len(group["missing"]) == 7
    page = (tmp_path / "report" / "index.html").read_text(encoding="utf-8")
    markdown = (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
    assert "test_public accuracy" in page and f"{FEWCLUE}<br><small>test_public</small>" in page
    value = row["cells"]["fewclue-eprstmt"]["scored"]["test_public"]["accuracy"]
    assert f"<small>test_public {value:.2f}</small>" in page
    assert f"{group['score']:.2f} (2/9) on test_public" in markdown and f"test_public {value:.2f}" in markdown
    text = summary_text(kernel, [tmp_path / "runs"], as_json=False)
    assert f"{FEWCLUE}: {group['score']:.2f} on test_public over fewclue-eprstmt, fewclue-bustm" in text
    for task in report["tasks"]:  # the PET table: every pair's score listed, none comparable with a baseline
        assert task["boards"] == []
        [board] = task["scored_boards"]
        assert (board["split"], board["metric"], board["mode"]) == ("test_public", "accuracy", "pet")
        published = [e for e in board["entries"] if e["kind"] == "published"]
        assert [e["version"] for e in published] == ["0", "1", "2", "3", "4", "few_all"]
        assert all("rank" not in e for e in board["entries"])
        [entry] = [e for e in board["entries"] if e["kind"] == "run"]
        assert entry["version"] == "few_all" and not entry["comparable"]
        assert entry["reason"] == "mode pet, the run's is fine-tuned"
        assert entry["value"] == row["cells"][task["name"]]["scored"]["test_public"]["accuracy"]


def test_a_pet_run_stands_beside_the_pet_score_of_its_pair(run_cli, kernel: Kernel, tmp_path: Path) -> None:
    data = tmp_path / "eprstmt"  # the sample standing for the full data: a comparable run
    shutil.copytree(sample_dir(kernel.task("fewclue-eprstmt")), data)
    _run(run_cli, "fewclue-eprstmt", "--model", "baseline", "--data-dir", data, "--set", "split=3",
         "-o", tmp_path / "pet")
    _run(run_cli, "fewclue-eprstmt", "--model", "baseline", "--data-dir", data, "-o", tmp_path / "plain")
    metrics_file = tmp_path / "pet" / "fewclue-eprstmt" / "metrics.json"
    metrics = json.loads(metrics_file.read_text(encoding="utf-8"))
    metrics["report_settings"]["method"] = "pet"  # as clue-models-hf's --set method=pet records it
    metrics_file.write_text(json.dumps(metrics), encoding="utf-8")
    report = write_report(kernel, [tmp_path / "pet", tmp_path / "plain"], tmp_path / "report", charts=False)
    rows = {row["mode"]: row for row in report["rows"]}
    assert set(rows) == {"pet", "fine-tuned"} and all(row["comparable"] for row in rows.values())
    assert rows["pet"]["label"] == "baseline · pet"
    [task] = report["tasks"]
    [board] = task["scored_boards"]
    runs = {e["row"]: e for e in board["entries"] if e["kind"] == "run"}
    pet, plain = runs[rows["pet"]["id"]], runs[rows["fine-tuned"]["id"]]
    assert pet["comparable"] and pet["version"] == "3" and pet["reason"] is None
    assert pet["value"] == metrics["test_public"]["accuracy"]
    spec = kernel.task("fewclue-eprstmt").published
    [beside] = [e for e in board["entries"] if e["kind"] == "published" and e["version"] == "3"]
    assert beside["value"] == spec[beside["index"]].value == 86.89
    assert {beside["rank"], pet["rank"]} == {1, 2} and (beside["rank"] == 1) == (beside["value"] >= pet["value"])
    order = [e.get("version") for e in board["entries"]]
    assert order.index("3") < board["entries"].index(pet) < order.index("4")  # listed right under its pair
    assert not plain["comparable"] and "rank" not in plain and plain["version"] == "few_all"
    assert plain["reason"] == "mode pet, the run's is fine-tuned"
    assert all("rank" not in e for e in board["entries"] if e.get("version") not in ("3", None))


def test_a_split_all_family_is_one_row(run_cli, kernel: Kernel, tmp_path: Path) -> None:
    _run(run_cli, "fewclue-eprstmt", "--model", "baseline", "--sample", "--set", "split=all", "-o", tmp_path / "all")
    report = write_report(kernel, [tmp_path / "all"], tmp_path / "report", charts=False)
    family = [row for row in report["rows"] if row.get("repeat")]
    assert [row["label"] for row in family] == ["baseline · sample · split 0–4"]
    [row], [single] = family, [row for row in report["rows"] if not row.get("repeat")]
    cell = row["cells"]["fewclue-eprstmt"]
    assert cell["repeat"] == {"setting": "split", "values": ["0", "1", "2", "3", "4"]}
    runs = {r["id"]: r for r in report["runs"]}
    files = [_metrics(runs[i]) for i in cell["runs"]]
    assert [runs[i]["repeat"]["value"] for i in cell["runs"]] == ["0", "1", "2", "3", "4"]
    assert [f["report_settings"]["split"] for f in files] == ["0", "1", "2", "3", "4"]
    for split, spread in (("dev", cell["seed_spread"]["accuracy"]),
                          ("test_public", cell["scored_spread"]["test_public"]["accuracy"])):
        values = [f[split]["accuracy"] for f in files]
        assert spread["values"] == values and spread["n"] == 5
        assert spread["mean"] == pytest.approx(statistics.fmean(values))
        assert spread["std"] == pytest.approx(statistics.stdev(values))
    assert cell["value"] == pytest.approx(statistics.fmean(f["dev"]["accuracy"] for f in files))
    assert cell["value"] != pytest.approx(cell["scored"]["test_public"]["accuracy"])  # so the next line tells
    assert row["groups"][FEWCLUE]["score"] == pytest.approx(cell["scored"]["test_public"]["accuracy"])
    assert row["settings"]["split"] == "0–4"
    [few_all] = single["cells"]["fewclue-eprstmt"]["runs"]
    assert runs[few_all]["repeat"]["value"] == "few_all" and "repeat" not in single["cells"]["fewclue-eprstmt"]
    assert all(r["in_table"] for r in report["runs"])
    [board] = report["tasks"][0]["scored_boards"]
    [mean] = [e for e in board["entries"] if e.get("row") == row["id"]]
    assert mean["version"] is None and not mean["comparable"] and "a mean over several trainings" in mean["reason"]
    markdown = (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
    spread = cell["scored_spread"]["test_public"]["accuracy"]
    assert f"test_public {spread['mean']:.2f} ± {spread['std']:.2f} (5 splits)" in markdown


def test_a_group_stays_on_dev_unless_every_member_has_the_split() -> None:
    members = {"G": ["a", "b", "c"]}
    assert average_groups(members, {"a": 10.0, "b": 20.0}, {"a": {"test_public": 30.0}})["G"] == {
        "score": 15.0, "tasks": ["a", "b"], "missing": ["c"], "complete": False}
    both = average_groups(members, {"a": 10.0, "b": 20.0}, {"a": {"test_public": 30.0}, "b": {"test_public": 50.0}})
    assert both["G"]["score"] == 40.0 and both["G"]["split"] == "test_public"


#: report.json's fields for runs without scored splits or repeats, as they were before FewCLUE: pinned, so
#: a CLUE-only report keeps its shape (its bytes are those of the code before scored splits existed).
RUN_KEYS = {"id", "path", "task", "model", "seed", "finished", "primary_metric", "primary", "dev", "counts",
            "sample", "partial", "limit", "data_version", "usage", "model_facts", "report_settings",
            "leaderboards", "intervals", "analysis", "notes", "scored_from", "in_table", "row", "recomputed"}
ROW_KEYS = {"label", "model", "mode", "shots", "data", "comparable", "reason", "kind", "category", "parameters",
            "size", "settings", "cells", "groups", "mean", "id"}
CELL_KEYS = {"metric", "runs", "seeds", "data_version", "dev", "value", "intervals"}
TASK_KEYS = {"name", "kind", "description", "primary_metric", "installed", "labels", "label_descriptions",
             "leaderboards", "data_versions", "published", "boards"}


def test_a_clue_only_report_has_the_fields_it_had(run_cli, kernel: Kernel, tmp_path: Path) -> None:
    _run(run_cli, "afqmc", "tnews", "--model", "baseline", "--sample", "-o", tmp_path / "runs")
    report = write_report(kernel, [tmp_path / "runs"], tmp_path / "report", charts=False)
    recompute.check_report(report, kernel)
    assert all(set(run) == RUN_KEYS for run in report["runs"])
    [row] = report["rows"]
    assert set(row) == ROW_KEYS and all(set(cell) == CELL_KEYS for cell in row["cells"].values())
    assert row["groups"]["CLUE 1.1 classification"] == {
        "score": pytest.approx(statistics.fmean(r["primary"] for r in report["runs"])),
        "tasks": ["afqmc", "tnews"], "missing": ["iflytek", "ocnli", "cluewsc2020", "csl"], "complete": False}
    assert all(set(task) == TASK_KEYS for task in report["tasks"])
    assert FEWCLUE not in report["groups"] and row["mode"] == "fine-tuned"
    page = (tmp_path / "report" / "index.html").read_text(encoding="utf-8")
    markdown = (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
    assert "test_public" not in page + markdown and "split 0–4" not in page + markdown
    assert "<small>accuracy</small>" in page  # the task header as it was
