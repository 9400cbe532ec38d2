"""``report.md``: the report's tables in GitHub-flavoured Markdown, for a README or an issue.

Every text that came from a file or a plugin (model names, row labels, task, metric and
setting names, settings values, paths in warnings, section titles) goes through
:func:`~clue_report.kit.md_text`: report.md is pasted where Markdown is rendered, and a model
named ``<img src=x onerror=alert(1)>`` must be shown, not rendered. The report's own formatting
is a :class:`~clue_report.kit.Markdown` cell, built from escaped pieces.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from clue_report import format as fmt
from clue_report.kit import Markdown, md_table, md_text
from clue_report.prompt_spread import markdown_lines as prompt_spread
from clue_report.stats import clustered_line


def _with(value: Any, detail: str) -> str:
    return f"{fmt.number(value)} {detail}".strip()


def _cell(cell: Mapping[str, Any]) -> Markdown:
    """The primary dev metric with its uncertainty, then its scores on the scored splits (``; test_public …``):
    numbers and brackets the report writes, split names escaped."""
    detail = fmt.cell_detail(cell)  # "[low, high]" (numbers), or "± std (n <setting>s)" naming a setting
    return Markdown("; ".join([_with(cell["value"], detail if detail.startswith("[") else md_text(detail)),
                               *map(md_text, [*fmt.scored_details(cell), *fmt.cell_marks(cell)])]))


def leaderboard(report: Mapping[str, Any]) -> str:
    tasks = report["tasks"]
    groups = [name for name in report["groups"] if any(name in row["groups"] for row in report["rows"])]
    rows = []
    for rank, row in enumerate(report["rows"], 1):
        label = row["label"] + ("" if row["comparable"] else " (not comparable)")
        cells = [rank, label, row["kind"], row["size"] or "—", fmt.usage(row), fmt.settings(row["settings"]) or "—"]
        cells += [fmt.group_text(row["groups"].get(name), split=True) for name in groups]  # escaped by md_table
        cells += [_cell(c) if (c := row["cells"].get(t["name"])) else "—" for t in tasks]
        rows.append(cells)
    headers = ["#", "model", "kind", "size", "use", "settings", *groups,
               *(f"{t['name']} ({t['primary_metric']})" for t in tasks)]
    return md_table(headers, rows)


def _task(task: Mapping[str, Any]) -> list[str]:
    lines = [f"### {md_text(task['name'])}", ""]
    for board in task["boards"]:
        shots = "" if board["shots"] is None else f", {board['shots']}-shot"
        lines += [md_text(f"dev {board['metric']} ({board['mode']}{shots}):"), ""]
        rows = []
        for entry in board["entries"]:
            if entry["kind"] == "published":
                rows.append([entry["rank"], entry["model"], fmt.number(entry["value"]),
                             f"published, CLUE {entry['version']} data", entry["source"]])
            else:
                rows.append([entry.get("rank", "—"), Markdown(f"**{md_text(entry['model'])}**"),
                             Markdown(_with(entry["value"], fmt.interval(entry.get("interval")))),
                             "this report" if entry["comparable"] else f"not comparable: {entry['reason']}", ""])
        lines += [md_table(["rank", "model", "value", "what", "source"], rows), ""]
        if not any(entry["kind"] == "run" for entry in board["entries"]):
            lines += [md_text(f"No run in this report was used this way ({board['mode']}{shots})."), ""]
    for board in task.get("scored_boards") or ():
        shots = "" if board["shots"] is None else f", {board['shots']}-shot"
        lines += [md_text(f"{board['split']} {board['metric']} ({board['mode']}{shots}), each run beside the "
                          f"published score of the data it trained on:"), ""]
        rows = []
        for entry in board["entries"]:
            if entry["kind"] == "published":
                rows.append([entry.get("rank", "—"), entry["model"], fmt.number(entry["value"]),
                             f"published, {entry['split']} ({entry['version']})", entry["source"]])
            else:
                version = f" ({entry['version']})" if entry["version"] else ""
                rows.append([entry.get("rank", "—"), Markdown(f"**{md_text(entry['model'])}**"),
                             fmt.number(entry["value"]),
                             f"this report{version}" if entry["comparable"]
                             else f"not comparable{version}: {entry['reason']}", ""])
        lines += [md_table(["rank", "model", "value", "what", "source"], rows), ""]
    if not task["boards"] and not task.get("scored_boards"):
        lines += ["No published dev score to set the runs beside.", ""]
    return lines


def _legend(report: Mapping[str, Any]) -> str:
    """What FewCLUE-like rows add to the legend (nothing for a report without scored splits or repeats)."""
    splits = list(dict.fromkeys(group["split"] for row in report["rows"] for group in row["groups"].values()
                                if group.get("split")))
    text = ""
    if splits:
        text += (f" After `;` a cell's score on {md_text(', '.join(splits))}; a group marked on "
                 f"{md_text(splits[0])} averages that split, which its benchmark reports, since every member "
                 f"present has it.")
    if any(row.get("repeat") for row in report["rows"]):
        text += " A row ending in a repeat (`split 0–4`) holds the mean ± std over those trainings."
    return text + md_text(fmt.sweep_legend(report))


def _run_notes(report: Mapping[str, Any]) -> list[str]:
    """The runs' own notes (their manifests'), one bullet each; nothing when no run has any, so a report of
    runs without notes reads as before."""
    notes = [f"- {md_text(run['id'])} · {md_text(run['task'])} · {md_text(run['model'])}: {md_text(note)}"
             for run in report["runs"] for note in run.get("run_notes") or ()]
    return ["## Runs' notes", "", "What each run recorded about itself (its manifest's notes).", "", *notes, ""] \
        if notes else []


def _circular(report: Mapping[str, Any]) -> list[str]:
    """Circular evaluation's totals beside the plain score (an LLM run's ``--set circular=all``: right under
    every order of the choices; each shown position's share of the answers), one row per run that has them,
    the runs a table cell left out too (a newer plain run of the model takes the cell: circular is a setting
    the cell's runs must share); nothing for a report without, so other reports read as before."""
    labels = {row["id"]: row["label"] for row in report["rows"]}
    rows = []
    for run in report["runs"]:
        dev = run.get("dev") or {}
        if "circular_accuracy" not in dev:
            continue
        picks = " · ".join(f"{key.removeprefix('pick_rate_')} {fmt.number(value, 1)}"
                           for key, value in dev.items() if key.startswith("pick_rate_"))
        count = dev.get("circular_questions")
        label = labels.get(run.get("row")) or f"{run['model']} (not in the table)"
        rows.append([label, run["task"], fmt.number(dev.get(run["primary_metric"])),
                     fmt.number(dev["circular_accuracy"]), "—" if count is None else f"{count:.0f}", picks])
    if not rows:
        return []
    return ["## Circular evaluation", "", "Each labelled question asked again with its choices reordered: "
            "circular is the share right under every order (OpenCompass's CircularEval); the pick rates are the "
            "share of all answers (every order) choosing the choice shown at each position, in %.", "",
            md_table(["model", "task", "plain", "circular", "questions", "pick rate by position"], rows), ""]


def render_markdown(report: Mapping[str, Any], sections: Sequence[tuple[str, list[str]]] = ()) -> str:
    """``report.md``; ``sections`` are the plugins' views as ``(title, lines)``, in page order."""
    lines = ["# CLUE report", ""]
    if report["warnings"]:
        lines += ["**Read this first:**", "", *(f"- {md_text(w)}" for w in report["warnings"]), ""]
    if clustered := clustered_line(report):  # which tasks' intervals resample passages
        lines += [md_text(clustered), ""]
    if report["rows"]:
        lines += ["## Leaderboard", "", leaderboard(report), "",
                  "Cells: primary dev metric with its 95% bootstrap interval (one run) or ± std over seeds. "
                  "Group scores average the members' primary metric; `k/n` marks an average over only some "
                  "members, which is not a leaderboard score." + _legend(report), ""]
        lines += ["## Beside published scores", ""]
        for task in report["tasks"]:
            lines += _task(task)
    lines += _circular(report)
    lines += prompt_spread(report)  # mean ± std over the task's prompt variants (prompt_variants=all)
    for title, section in sections:
        lines += [f"## {md_text(title)}", "", *section, *([""] if section and section[-1] else [])]
    lines += _run_notes(report)
    return "\n".join(lines).rstrip() + "\n"
