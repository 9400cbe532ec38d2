"""The terminal summary of ``clue-core report`` (no ``-o``): each run's score and the group averages.

The group averages are those of the HTML report's rows (:func:`~clue_report.rows.build_rows`):
one per way of running one model, a task's seeds averaged, runs with other settings left
out and named. A plain average over every run found would mix models, silently putting
one model's AFQMC next to another's TNEWS in a score no model got. With one row the
lines and ``--json`` keep the shape they always had (``groups``); with several, each
group line names its row and ``--json`` holds them under ``rows`` only.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from clue_core.plugin import METRICS, ClueError, Registry, format_table
from clue_report.collect import Run, collect, input_files, score_of
from clue_report.groups import leaderboard_members, merge_members
from clue_report.published import run_usage
from clue_report.rows import build_rows, data_version, extra_fields, model_facts
from clue_report.sections import input_names, registered


def row_entry(kernel: Registry | None, number: int, run: Run) -> dict[str, Any]:
    """The fields :func:`build_rows` reads, without re-scoring anything (the summary shows scores only)."""
    metrics = run.metrics
    return {
        "id": f"run-{number}", "path": str(run.path), "task": run.task, "model": run.model, "seed": run.seed,
        "finished": str(run.manifest.get("finished") or ""), "primary_metric": metrics["primary_metric"],
        "dev": {k: float(v) for k, v in (metrics.get("dev") or {}).items() if isinstance(v, (int, float))},
        "sample": run.sample, "partial": run.partial, "limit": run.limit,
        "data_version": data_version(run.manifest, run.sample), "usage": run_usage(metrics),
        "model_facts": model_facts(kernel, run.manifest, metrics),
        "report_settings": run.report_settings, "settings": run.manifest.get("settings") or {},
        "leaderboards": [[lb["benchmark"], lb["group"]] for lb in metrics.get("leaderboards") or []],
        "intervals": {}, "in_table": False, "row": None,
        **extra_fields(run, kernel.tasks.get(run.task) if kernel is not None else None),
    }


def summary_rows(kernel: Registry, runs: Sequence[Run]) -> tuple[list[dict[str, Any]], list[str]]:
    """``[{"label", "groups"}]`` per row, as the HTML report forms them, and the notes on runs left out."""
    entries = [row_entry(kernel, n, run) for n, run in enumerate(runs, 1)]
    members = merge_members(leaderboard_members(kernel.tasks.values()),
                            ((e["task"], e["leaderboards"]) for e in entries))
    notes: list[str] = []
    rows = build_rows(entries, members, notes)
    shown = [{"label": row["label"], "groups": {name: {k: v for k, v in group.items() if k != "complete"}
                                                for name, group in row["groups"].items()}} for row in rows]
    return shown, notes


def _group_line(name: str, group: dict[str, Any]) -> str:
    missing = f" (missing: {', '.join(group['missing'])})" if group["missing"] else ""
    split = f" on {group['split']}" if group.get("split") else ""  # FewCLUE overall: test_public, not dev
    return f"{name}: {group['score']:.2f}{split} over {', '.join(group['tasks'])}{missing}"


def _refuse_section_files(kernel: Registry, paths: Sequence[Path]) -> None:
    """A section's file alone (a SuperCLUE comparison.json) has no scores to print: its view is in the
    HTML report, so the summary says to add -o rather than 'no runs here'."""
    for spec, _ in registered(kernel):
        for path in paths:
            files = input_files(path, spec.inputs)
            if files and not (path.is_dir() and ((path / METRICS).is_file() or any(path.glob(f"*/{METRICS}")))):
                raise ClueError(f"{path}: {files[0].name} ({spec.title}) is shown in the HTML report: add -o DIR")


def summary_text(kernel: Registry, paths: Sequence[Path], as_json: bool) -> str:
    """The terminal report: each run's primary score and each row's group averages (a section's files
    among the paths are left to the HTML report)."""
    _refuse_section_files(kernel, paths)
    found = collect(list(paths), records=False, inputs=input_names(kernel))
    scores = [score_of(run) for run in found.runs]
    rows, notes = summary_rows(kernel, found.runs)
    unfinished = [{"path": str(u.path), "task": u.task, "reason": u.reason} for u in found.unfinished]
    if as_json:
        shape: dict[str, Any] = {"tasks": scores}
        if len(rows) <= 1:
            shape["groups"] = rows[0]["groups"] if rows else {}
        shape.update(rows=rows, notes=notes, unfinished=unfinished)
        return json.dumps(shape, ensure_ascii=False, indent=2, default=str)
    lines = [format_table([["task", "primary", "score", "model", "run dir"]]
                          + [[s["task"], s["primary_metric"],
                              f"{s['primary']:.2f}" if s["primary"] is not None else "-",
                              s["model"], s["run_dir"]] for s in scores])]
    for row in rows:
        prefix = f"{row['label']}: " if len(rows) > 1 else ""
        lines += [prefix + _group_line(name, group) for name, group in row["groups"].items()]
    lines += [f"note: {note}" for note in notes]
    lines += [f"note: {note}" for sweep in found.sweeps if (note := sweep.note())]
    lines += [f"left out, unfinished: {u.path} ({u.reason})" for u in found.unfinished]
    return "\n".join(lines)
