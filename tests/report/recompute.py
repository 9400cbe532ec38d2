"""Recompute every number of a report.json from the run directories' own files.

Each ``check_*`` function asserts one part of the report against values computed here
from ``metrics.json``, ``predictions/dev.jsonl``, the task's dev data (for groups and
context lengths), the installed task specs (published scores, leaderboard members) and
the comparison file. :data:`VERIFIED` lists every kind of number these checks cover, so
a number added to the report later without a check fails :func:`check_all_numbers_covered`.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

import pytest

from clue_core.plugin import resolve
from clue_core.reading import read_split
from clue_tasks_mrc import cmrc_metric
from tests.report import reference

#: Dict keys whose children are names (tasks, metrics, labels, dimensions), not schema fields.
NAMED_CHILDREN = {"cells", "dev", "intervals", "recomputed", "groups", "seed_spread", "counts", "dimensions",
                  "categories", "label_descriptions", "descriptions", "data_versions"}
#: Dict keys whose whole content is copied settings or model facts.
COPIED = {"report_settings", "settings", "model_info"}

VERIFIED = {
    # copied from metrics.json / manifest.json (check_runs)
    "runs[].dev.*", "runs[].primary", "runs[].counts.*", "runs[].seed", "runs[].limit", "runs[].recomputed.*",
    "runs[].report_settings", "runs[].model_facts.parameters", "runs[].usage.shots",
    # bootstrap intervals, recomputed with the loop reference (check_runs)
    "runs[].intervals.*.low", "runs[].intervals.*.high", "runs[].intervals.*.units",
    "runs[].intervals.*.resamples", "runs[].intervals.*.confidence", "runs[].intervals.*.seed",
    # error analysis (check_analysis)
    "runs[].analysis.confusion.matrix[][]", "runs[].analysis.confusion.per_label[].precision",
    "runs[].analysis.confusion.per_label[].recall", "runs[].analysis.confusion.per_label[].f1",
    "runs[].analysis.confusion.per_label[].support", "runs[].analysis.confusion.per_label[].predicted",
    "runs[].analysis.confusion.confused_pairs[].count", "runs[].analysis.context_length[].low",
    "runs[].analysis.context_length[].high", "runs[].analysis.context_length[].n",
    "runs[].analysis.context_length[].value", "runs[].analysis.wrong_examples[].em",
    "runs[].analysis.wrong_examples[].accuracy", "runs[].analysis.wrong_examples[].id",
    # rows (check_rows)
    "rows[].cells.*.value", "rows[].cells.*.dev.*", "rows[].cells.*.seeds[]", "rows[].cells.*.seed_spread.*.mean",
    "rows[].cells.*.seed_spread.*.std", "rows[].cells.*.seed_spread.*.n", "rows[].cells.*.seed_spread.*.values[]",
    "rows[].cells.*.intervals.*.low", "rows[].cells.*.intervals.*.high", "rows[].cells.*.intervals.*.units",
    "rows[].cells.*.intervals.*.resamples", "rows[].cells.*.intervals.*.confidence",
    "rows[].cells.*.intervals.*.seed", "rows[].groups.*.score", "rows[].mean", "rows[].parameters", "rows[].shots",
    "rows[].settings",
    # tasks (check_tasks)
    "tasks[].published[].value", "tasks[].published[].shots", "tasks[].boards[].shots",
    "tasks[].boards[].entries[].value", "tasks[].boards[].entries[].rank", "tasks[].boards[].entries[].index",
    "tasks[].boards[].entries[].shots", "tasks[].boards[].entries[].interval.low",
    "tasks[].boards[].entries[].interval.high", "tasks[].boards[].entries[].interval.units",
    "tasks[].boards[].entries[].interval.resamples", "tasks[].boards[].entries[].interval.confidence",
    "tasks[].boards[].entries[].interval.seed",
    # the report's own settings (check_header)
    "version", "bootstrap.resamples", "bootstrap.confidence", "bootstrap.seed",
    # comparisons (check_comparison)
    "comparisons[].tie_margin", "comparisons[].models[].total", "comparisons[].models[].parameters",
    "comparisons[].models[].dimensions.*", "comparisons[].models[].categories.*",
    "comparisons[].models[].vs_reference.overall.win", "comparisons[].models[].vs_reference.overall.tie",
    "comparisons[].models[].vs_reference.overall.loss", "comparisons[].models[].vs_reference.dimensions.*.win",
    "comparisons[].models[].vs_reference.dimensions.*.tie", "comparisons[].models[].vs_reference.dimensions.*.loss",
    "comparisons[].models[].quadrant.x", "comparisons[].models[].quadrant.y", "comparisons[].quadrant.split.x",
    "comparisons[].quadrant.split.y", "comparisons[].maturity[].index",
    # the explorer section (check_explorer in tests/report/test_explorer.py)
    "explorer.limit", "explorer.per_page", "explorer.static_rows", "explorer.runs[].total", "explorer.runs[].shown",
    "explorer.runs[].left_out", "explorer.runs[].confusion.matrix[][]", "explorer.runs[].items[].scores[]",
    "explorer.runs[].items[].grade",
}


def numeric_patterns(value: Any, path: str = "", named: bool = False) -> set[str]:
    """The normalised path of every number in ``value`` (list items ``[]``, named keys ``*``)."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return set()
    if isinstance(value, (int, float)):
        return {path}
    found: set[str] = set()
    if isinstance(value, list):
        for item in value:
            found |= numeric_patterns(item, f"{path}[]")
    elif isinstance(value, dict):
        for key, item in value.items():
            if key in COPIED and not named:
                if numeric_patterns(item):
                    found.add(f"{path}.{key}".lstrip("."))
                continue
            step = "*" if named else key
            found |= numeric_patterns(item, f"{path}.{step}".lstrip("."), named=key in NAMED_CHILDREN and not named)
    return found


def check_all_numbers_covered(report: dict[str, Any]) -> None:
    unchecked = numeric_patterns(report) - VERIFIED
    assert not unchecked, f"numbers in report.json without a recomputation check: {sorted(unchecked)}"


def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def records_of(run: dict[str, Any]) -> list[dict[str, Any]]:
    lines = (Path(run["path"]) / "predictions" / "dev.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def per_example(metric: str, records: list[dict[str, Any]]) -> list[float]:
    if metric == "accuracy":
        return [100.0 * (r["prediction"] == r["gold"]) for r in records]
    em = [100.0 * cmrc_metric.exact_match(r["gold"], str(r["prediction"])) for r in records]
    f1 = [100.0 * cmrc_metric.f1_score(r["gold"], str(r["prediction"])) for r in records]
    return {"em": em, "f1": f1, "average": [(a + b) / 2 for a, b in zip(em, f1)]}[metric]


def dev_examples(kernel: Any, run: dict[str, Any]) -> dict[str, Any]:
    manifest = read_json(Path(run["path"]) / "manifest.json")
    split = read_split(kernel.task(run["task"]), Path(manifest["data"]["data_dir"]), "dev")
    return {str(e.id): e for e in split.examples}


def check_header(report: dict[str, Any]) -> None:
    assert report["schema"] == "clue-core/report" and report["version"] == 1
    assert report["bootstrap"] == {**report["bootstrap"], "resamples": 1000, "confidence": 0.95, "seed": 0}


def check_runs(report: dict[str, Any], kernel: Any) -> None:
    for run in report["runs"]:
        metrics = read_json(Path(run["path"]) / "metrics.json")
        manifest = read_json(Path(run["path"]) / "manifest.json")
        assert run["dev"] == metrics["dev"] and run["primary"] == metrics["primary"]
        assert run["counts"] == metrics["counts"] and run["seed"] == manifest["seed"]
        assert run["report_settings"] == metrics["report_settings"]
        assert run["usage"]["shots"] == metrics["report_settings"].get("shots")
        assert run["limit"] == (manifest.get("partial") or {}).get("limit")
        spec = kernel.models.get(manifest.get("model_spec"))
        assert run["model_facts"]["parameters"] == (metrics["model_info"].get("parameters")
                                                    or (spec.parameters if spec else None))
        for name, value in run["recomputed"].items():
            assert value == pytest.approx(metrics["dev"][name], abs=1e-9)
        records = records_of(run)
        groups: list[Any] = [None] * len(records)
        if run.get("clustered"):  # the records' passages, else the task's cluster of each example re-read
            groups = [r.get("group") for r in records]
            if not any(groups):
                examples, task = dev_examples(kernel, run), kernel.task(run["task"])
                cluster = resolve(task.cluster) if task.cluster else (lambda example: example.group)
                groups = [cluster(examples[str(r["id"])]) for r in records]
        for metric, interval in run["intervals"].items():
            assert "low" in interval, (run["path"], metric, interval)
            if metric == "macro_f1":
                statistic = reference.macro_f1_of([r["gold"] for r in records], [r["prediction"] for r in records])
            else:
                values = per_example(metric, records)
                assert sum(values) / len(values) == pytest.approx(metrics["dev"][metric], abs=1e-9)
                statistic = reference.mean_of(values)
            low, high = reference.bootstrap(statistic, groups, interval["resamples"], interval["seed"])
            assert (interval["low"], interval["high"]) == pytest.approx((low, high), abs=1e-9), (run["path"], metric)
            assert interval["units"] == len(reference.unit_members(groups))
            assert interval["confidence"] == 0.95


def check_analysis(report: dict[str, Any], kernel: Any) -> None:
    for run in report["runs"]:
        records = records_of(run)
        analysis = run["analysis"]
        confusion = analysis.get("confusion")
        if confusion:
            counts = reference.confusion_counts(records)
            labels, columns = confusion["labels"], confusion["columns"]
            for i, gold in enumerate(labels):
                for j, predicted in enumerate(columns):
                    assert confusion["matrix"][i][j] == counts.get((gold, predicted), 0)
            assert sum(counts.values()) == sum(map(sum, confusion["matrix"]))
            for row in confusion["per_label"]:
                label = row["label"]
                tp = counts.get((label, label), 0)
                support = sum(c for (g, _), c in counts.items() if g == label)
                predicted = sum(c for (_, p), c in counts.items() if p == label)
                assert (row["support"], row["predicted"]) == (support, predicted)
                assert row["precision"] == pytest.approx(100 * tp / predicted if predicted else 0.0)
                assert row["recall"] == pytest.approx(100 * tp / support if support else 0.0)
                assert row["f1"] == pytest.approx(200 * tp / (support + predicted) if support + predicted else 0.0)
            off = sorted((c for (g, p), c in counts.items() if g != p), reverse=True)
            assert [p["count"] for p in confusion["confused_pairs"]] == off[:len(confusion["confused_pairs"])]
            assert len(confusion["confused_pairs"]) == min(10, len(off))
        metric = run["primary_metric"]
        values = per_example(metric, records) if metric in ("accuracy", "em", "f1") else None
        if analysis.get("context_length"):
            examples = dev_examples(kernel, run)
            lengths = [len(examples[str(r["id"])].context) for r in records]
            bins = analysis["context_length"]
            assert sum(b["n"] for b in bins) == len(records)
            for b in bins:
                chosen = [v for v, n in zip(values, lengths) if b["low"] <= n <= b["high"]]
                assert b["n"] == len(chosen) and b["value"] == pytest.approx(sum(chosen) / len(chosen))
        if values is None:
            continue
        by_id = {str(r["id"]): (r, v) for r, v in zip(records, values)}  # ids as the report writes them
        wrong = analysis["wrong_examples"]
        assert len(wrong) == min(5, sum(1 for v in values if v < 100))
        for item in wrong:
            _, value = by_id[str(item["id"])]
            assert value < 100 and item.get(metric, value) == pytest.approx(value)


def _members(kernel: Any, runs: list[dict[str, Any]]) -> dict[str, list[str]]:
    members: dict[str, list[str]] = {}
    for task in kernel.tasks.values():
        for lb in task.leaderboards:
            members.setdefault(f"{lb.benchmark} {lb.group}", []).append(task.name)
    for run in runs:
        for lb in read_json(Path(run["path"]) / "metrics.json")["leaderboards"]:
            tasks = members.setdefault(f"{lb['benchmark']} {lb['group']}", [])
            if run["task"] not in tasks:
                tasks.append(run["task"])
    return members


def check_rows(report: dict[str, Any], kernel: Any) -> None:
    runs = {run["id"]: run for run in report["runs"]}
    members = _members(kernel, report["runs"])
    for row in report["rows"]:
        for task, cell in row["cells"].items():
            files = [read_json(Path(runs[i]["path"]) / "metrics.json") for i in cell["runs"]]
            manifests = [read_json(Path(runs[i]["path"]) / "manifest.json") for i in cell["runs"]]
            assert cell["seeds"] == [m["seed"] for m in manifests]
            assert cell["value"] == pytest.approx(statistics.fmean(f["primary"] for f in files))
            for metric, value in cell["dev"].items():
                assert value == pytest.approx(statistics.fmean(f["dev"][metric] for f in files))
            if len(files) > 1:
                for metric, spread in cell["seed_spread"].items():
                    values = [f["dev"][metric] for f in files]
                    assert spread["values"] == values and spread["n"] == len(values)
                    assert spread["mean"] == pytest.approx(statistics.fmean(values))
                    assert spread["std"] == pytest.approx(statistics.stdev(values))
            else:
                assert cell["intervals"] == runs[cell["runs"][0]]["intervals"]
            assert all(runs[i]["report_settings"].items() <= _flat(row["settings"], task).items()
                       for i in cell["runs"])
        values = {task: cell["value"] for task, cell in row["cells"].items()}
        assert row["mean"] == pytest.approx(statistics.fmean(values.values()))
        for name, group in row["groups"].items():
            present = [t for t in members[name] if t in values]
            assert group["tasks"] == present and group["missing"] == [t for t in members[name] if t not in values]
            assert group["score"] == pytest.approx(statistics.fmean(values[t] for t in present))
            assert group["complete"] == (not group["missing"])
        assert set(row["groups"]) == {n for n, tasks in members.items() if any(t in values for t in tasks)}
        assert row["shots"] == runs[next(iter(row["cells"].values()))["runs"][0]]["usage"]["shots"]
        assert row["parameters"] == runs[next(iter(row["cells"].values()))["runs"][0]]["model_facts"]["parameters"]


def _flat(settings: dict[str, Any], task: str) -> dict[str, Any]:
    return {k: (v[task] if isinstance(v, dict) else v) for k, v in settings.items()
            if not isinstance(v, dict) or task in v}


def check_tasks(report: dict[str, Any], kernel: Any) -> None:
    rows = {row["id"]: row for row in report["rows"]}
    for task in report["tasks"]:
        spec = kernel.task(task["name"])
        expected = [{**{k: getattr(s, k) for k in ("model", "split", "version", "metric", "value", "source", "mode",
                                                   "shots")}, "prompt": None} for s in spec.published]
        assert task["published"] == expected
        for board in task["boards"]:
            ranked = [e for e in board["entries"] if "rank" in e]
            assert [e["rank"] for e in ranked] == list(range(1, len(ranked) + 1))
            assert [e["value"] for e in ranked] == sorted((e["value"] for e in ranked), reverse=True)
            for entry in board["entries"]:
                if entry["kind"] == "published":
                    source = spec.published[entry["index"]]
                    assert (entry["value"], entry["metric"], entry["split"]) == (source.value, board["metric"], "dev")
                    mode = {"generation": "generate", "likelihood": "loglikelihood"}.get(source.mode, source.mode)
                    assert (mode, source.shots) == (board["mode"], board["shots"])
                else:
                    cell = rows[entry["row"]]["cells"][task["name"]]
                    assert entry["value"] == cell["dev"][board["metric"]]
                    assert entry["interval"] == cell["intervals"].get(board["metric"])
                    assert ("rank" in entry) == rows[entry["row"]]["comparable"]


def check_comparison(comparison: dict[str, Any], source: dict[str, Any]) -> None:
    assert comparison["tie_margin"] == source.get("tie_margin")
    given = {m["name"]: m for m in source["models"]}
    for model in comparison["models"]:
        raw = given[model["name"]]
        assert model["total"] == raw["total"] and model["parameters"] == raw.get("parameters")
        assert model["dimensions"] == raw["dimensions"] and model["categories"] == raw["categories"]
        if "vs_reference" in raw:
            assert model["vs_reference"]["overall"] == raw["vs_reference"]["overall"]
            assert model["vs_reference"]["dimensions"] == raw["vs_reference"]["dimensions"]
        for key in ("x", "y"):
            dims = source["quadrant"][key]["dimensions"]
            assert model["quadrant"][key] == pytest.approx(statistics.fmean(raw["dimensions"][d] for d in dims))
    for key in ("x", "y"):
        assert comparison["quadrant"]["split"][key] == pytest.approx(
            statistics.fmean(m["quadrant"][key] for m in comparison["models"]))
    assert [(m["dimension"], m["index"], m["band"]) for m in comparison["maturity"]] == [
        (m["dimension"], m["index"], m["band"]) for m in source["maturity"]]


def check_report(report: dict[str, Any], kernel: Any) -> None:
    check_header(report)
    check_runs(report, kernel)
    check_analysis(report, kernel)
    check_rows(report, kernel)
    check_tasks(report, kernel)
    check_all_numbers_covered(report)

