"""Assemble ``report.json``'s content from run directories and the report sections' files.

Everything the HTML page and ``report.md`` show is computed here, once, into plain data:
per run (re-scored per example, intervals, error analysis), per leaderboard row (cells
and group scores), per task (published scores, ranked side by side), each plugin section's
data (:mod:`clue_report.sections`) and the warnings that keep incomplete or mixed material
from passing unnoticed. The renderers only format it, so every number on the page is in
``report.json``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from clue_core.plugin import CLASSIFICATION, MULTIPLE_CHOICE, SPAN, Manifest, Registry, TaskSpec, __version__
from clue_report import error_analysis, stats
from clue_report.collect import Collected, Run, collect
from clue_report.explorer import DEFAULT_EXAMPLES, Feed, feeding
from clue_report.groups import leaderboard_members, merge_members
from clue_report.published import boards, published_dict, run_usage, scored_boards
from clue_report.rows import build_rows, data_version, extra_fields, model_facts
from clue_report.scored import DevData, Scored, score_run
from clue_report.sections import Section, build_sections, input_names

SCHEMA = "clue-core/report"
#: Recomputed totals must equal metrics.json's up to rounding noise.
TOLERANCE = 1e-6


def run_intervals(task: TaskSpec, scored: Scored, dev: dict[str, float], seed: int, resamples: int
                  ) -> dict[str, dict[str, Any]]:
    """A bootstrap interval for every dev metric, or the reason there is none."""
    unit = scored.unit if scored.grouped else "example"  # C3's questions resample by passage
    result: dict[str, dict[str, Any]] = {}
    for metric in dev:
        values = scored.per_example.get(metric)
        keep = [i for i, v in enumerate(values or ()) if v is not None]
        groups = [scored.groups[i] for i in keep] if scored.grouped else None
        if keep:
            interval = stats.bootstrap_mean([values[i] for i in keep], groups,  # type: ignore[index]
                                            unit=unit, resamples=resamples, seed=seed)
        elif metric == "macro_f1" and "macro_f1" in task.metrics and task.kind in (CLASSIFICATION, MULTIPLE_CHOICE):
            gold = [getattr(e, "label", None) for e in scored.examples]
            keep = [i for i, g in enumerate(gold) if g is not None]
            if not keep:
                result[metric] = {"reason": "no gold labels"}
                continue
            predicted = [None if p is None else p.value for p in scored.predictions]
            interval = stats.bootstrap_macro_f1([gold[i] for i in keep], [predicted[i] for i in keep],
                                                [scored.groups[i] for i in keep] if scored.grouped else None,
                                                unit=unit, resamples=resamples, seed=seed)
        else:
            result[metric] = {"reason": "no per-example values: the report re-scores with the task's own metrics, "
                                        "and this one gives none (or was scored beside them)"}
            continue
        if interval.units < 2:  # one example or passage: every resample is the same, which is no interval
            result[metric] = {"reason": f"one {interval.unit} only: no interval"}
            continue
        result[metric] = interval.as_dict()
    return result


def clustered_tasks(runs: Sequence[dict[str, Any]]) -> dict[str, str]:
    """Each task whose intervals resample groups, by what (``{"c3": "passage"}``): the report says it."""
    found: dict[str, str] = {}
    for run in runs:
        if run.get("clustered"):
            found.setdefault(run["task"], run["clustered"]["unit"])
    return found


def analyse(task: TaskSpec, scored: Scored, primary: str, seed: int) -> dict[str, Any]:
    analysis: dict[str, Any] = {}
    if task.kind == CLASSIFICATION and scored.examples:
        analysis["confusion"] = error_analysis.confusion(task, scored)
    if task.kind in (SPAN, MULTIPLE_CHOICE):
        analysis["context_length"] = error_analysis.context_length(scored, primary)
    analysis["wrong_examples"] = error_analysis.wrong_examples(task, scored, primary, seed)
    return analysis


def _run_entry(kernel: Registry | None, number: int, run: Run, task: TaskSpec | None, data: DevData, seed: int,
               resamples: int, warnings: list[str], feed: Feed) -> dict[str, Any]:
    metrics = run.metrics
    dev = {k: float(v) for k, v in (metrics.get("dev") or {}).items() if isinstance(v, (int, float))}
    entry: dict[str, Any] = {
        "id": f"run-{number}", "path": str(run.path), "task": run.task, "model": run.model, "seed": run.seed,
        "finished": str(run.manifest.get("finished") or ""), "primary_metric": metrics["primary_metric"],
        "primary": metrics.get("primary"), "dev": dev, "counts": metrics.get("counts") or {},
        "sample": run.sample, "partial": run.partial, "limit": run.limit,
        "data_version": data_version(run.manifest, run.sample),
        "usage": run_usage(metrics), "model_facts": model_facts(kernel, run.manifest, metrics),
        "report_settings": run.report_settings, "settings": run.manifest.get("settings") or {},
        "leaderboards": [[lb["benchmark"], lb["group"]] for lb in metrics.get("leaderboards") or []],
        "intervals": {}, "analysis": {}, "notes": list(run.notes), "scored_from": None, "in_table": False,
        "row": None,
    }
    if run.first:  # --first N: the first examples in file order (only then, so other runs keep their shape)
        entry["first"] = True
    run_notes = [str(note) for note in Manifest(run.manifest).notes]
    if run_notes:  # the run's own notes (its manifest's: the reader's and the runner's, DataCLUE's "not the
        # DataCLUE protocol" mark among them), beside the report's on reading it; only where it has some, so
        # a report of runs without notes keeps its shape
        entry["run_notes"] = run_notes
    entry.update(extra_fields(run, task))
    if task is None:
        entry["notes"].append(f"task {run.task} is not installed: no intervals or error analysis")
        entry["intervals"] = {m: {"reason": "task not installed"} for m in dev}
        return entry
    scored = score_run(kernel, task, run, data)
    if scored is None:
        entry["intervals"] = {m: {"reason": "no prediction records"} for m in dev}
        return entry
    entry["notes"] += scored.notes
    feed.runs[entry["id"]] = (task, run, scored)  # the explorer shows these examples (clue_report.explorer)
    if not scored.examples:
        entry["intervals"] = {m: {"reason": "predictions could not be re-scored"} for m in dev}
        return entry
    entry["scored_from"] = "data" if scored.from_data else "records"
    entry["recomputed"] = {k: v for k, v in scored.totals.items() if k in dev}
    for metric, value in entry["recomputed"].items():
        if abs(value - dev[metric]) > TOLERANCE:
            warnings.append(f"{run.path}: {metric} recomputed from predictions/dev.jsonl is {value:.4f}, "
                            f"metrics.json says {dev[metric]:.4f}")
    entry["intervals"] = run_intervals(task, scored, dev, seed, resamples)
    if scored.grouped:  # which passages its intervals resample, and where they were found
        entry["clustered"] = {"unit": scored.unit, "from": scored.groups_from}  # the count: intervals' units
    entry["analysis"] = analyse(task, scored, entry["primary_metric"], seed)
    return entry


def reader_version(task: TaskSpec | None, run: dict[str, Any]) -> str | None:
    """The value of the task's reader settings the run read with (FewCLUE's pair, ``few_all`` or
    ``0``–``4``): what a published score on a scored split names as its ``version``."""
    if task is None or not task.reader_settings:
        return None
    settings = run.get("settings") or {}
    return "/".join(str(settings.get(s.name, s.default)) for s in task.reader_settings)


def _task_entry(task: TaskSpec | None, name: str, rows: list[dict[str, Any]], runs: list[dict[str, Any]]
                ) -> dict[str, Any]:
    first = next(r for r in runs if r["task"] == name)
    published = [published_dict(s) for s in task.published] if task else []
    entries = []
    for row in rows:
        cell = row["cells"].get(name)
        if cell is None:
            continue
        run = next(r for r in runs if r["id"] == cell["runs"][0])
        entries.append({"row": row["id"], "model": row["label"], "usage": run["usage"], "dev": cell["dev"],
                        "intervals": cell["intervals"], "comparable": row["comparable"], "reason": row["reason"],
                        "scored": cell.get("scored") or {},
                        "version": None if "repeat" in cell else reader_version(task, run)})
    versions: dict[str, list[str]] = {}
    for row in rows:
        if name in row["cells"]:
            versions.setdefault(row["cells"][name]["data_version"], []).append(row["id"])
    entry = {
        "name": name, "kind": task.kind if task else "?", "description": task.description if task else "",
        "primary_metric": first["primary_metric"], "installed": task is not None,
        "labels": list(task.labels) if task else [], "label_descriptions": dict(task.label_descriptions) if task
        else {}, "leaderboards": [f"{b} {g}" for b, g in first["leaderboards"]],
        "data_versions": versions, "published": published,
        "boards": boards(published, entries, first["primary_metric"]),
    }
    extra = scored_boards(published, entries, first["primary_metric"])
    if extra:  # a task scoring a labelled split besides dev (FewCLUE's test_public)
        entry["scored_boards"] = extra
    return entry


def _order_tasks(members: dict[str, list[str]], present: Sequence[str]) -> list[str]:
    ordered = [t for tasks in members.values() for t in tasks if t in present]
    return list(dict.fromkeys([*ordered, *present]))


def build_report(kernel: Registry | None, paths: Sequence[Path], *, seed: int = stats.SEED,
                 resamples: int = stats.RESAMPLES, examples: int = DEFAULT_EXAMPLES
                 ) -> tuple[dict[str, Any], list[Section]]:
    """Everything the report shows, as JSON-ready data, and the plugin sections built into it
    (the explorer, one of them, shows up to ``examples`` dev examples per run)."""
    found: Collected = collect(list(paths), inputs=input_names(kernel))
    warnings: list[str] = []
    data = DevData()
    feed = Feed(limit=examples)
    tasks_installed = kernel.tasks if kernel is not None else {}
    runs = [_run_entry(kernel, n, run, tasks_installed.get(run.task), data, seed, resamples, warnings, feed)
            for n, run in enumerate(found.runs, 1)]
    declared = leaderboard_members(tasks_installed.values())
    members = merge_members(declared, ((r["task"], r["leaderboards"]) for r in runs))
    rows = build_rows(runs, members, warnings)
    task_names = _order_tasks(members, [r["task"] for r in runs])
    tasks = [_task_entry(tasks_installed.get(name), name, rows, runs) for name in task_names]
    for task in tasks:
        if len({version.split()[-1] for version in task["data_versions"]}) > 1:  # digests, sample or not
            described = "; ".join(f"{version}: {', '.join(ids)}" for version, ids in task["data_versions"].items())
            warnings.append(f"{task['name']}: rows are scored on different dev data ({described}); "
                            f"their {task['name']} scores are not directly comparable")
    odd = [row["label"] for row in rows if not row["comparable"]]
    if odd:
        warnings.append(f"not comparable with published scores or full-dev runs (bundled sample or --limit): "
                        f"{', '.join(odd)}")
    warnings += [note for sweep in found.sweeps if (note := sweep.note())]
    for run in found.unfinished:
        warnings.append(f"left out, unfinished: {run.path} ({run.reason})")
    for run in runs:
        warnings += [f"{run['path']}: {note}" for note in run["notes"]]
    for run in runs:
        del run["settings"]
    report = {
        "schema": SCHEMA, "version": 1, "clue_core": __version__,
        "bootstrap": {"resamples": resamples, "confidence": stats.CONFIDENCE, "seed": seed, "method": "percentile",
                      "unit": "example, or the examples' group where the task declares one (C3, CMRC2018, DRCD, "
                              "CHID: the passage)", "clustered": clustered_tasks(runs)},
        "warnings": warnings,
        "groups": {name: tasks for name, tasks in members.items() if any(t in task_names for t in tasks)},
        "tasks": tasks, "rows": rows, "runs": runs,
        "unfinished": [{"path": str(u.path), "task": u.task, "reason": u.reason} for u in found.unfinished],
    }
    with feeding(feed):
        return report, build_sections(kernel, found.inputs, report)
