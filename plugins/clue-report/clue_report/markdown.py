"""``report.md``: the report's tables in GitHub-flavoured Markdown, for a README or an issue."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from clue_report import format as fmt
from clue_report.kit import md_table


def _with(value: Any, detail: str) -> str:
    return f"{fmt.number(value)} {detail}".strip()


def leaderboard(report: Mapping[str, Any]) -> str:
    tasks = report["tasks"]
    groups = [name for name in report["groups"] if any(name in row["groups"] for row in report["rows"])]
    rows = []
    for rank, row in enumerate(report["rows"], 1):
        label = row["label"] + ("" if row["comparable"] else " (not comparable)")
        cells = [rank, label, row["kind"], row["size"] or "—", fmt.usage(row), fmt.settings(row["settings"]) or "—"]
        cells += [fmt.group_text(row["groups"].get(name)) for name in groups]
        cells += [_with(c["value"], fmt.cell_detail(c)) if (c := row["cells"].get(t["name"])) else "—" for t in tasks]
        rows.append(cells)
    headers = ["#", "model", "kind", "size", "use", "settings", *groups,
               *(f"{t['name']} ({t['primary_metric']})" for t in tasks)]
    return md_table(headers, rows)


def _task(task: Mapping[str, Any]) -> list[str]:
    lines = [f"### {task['name']}", ""]
    for board in task["boards"]:
        shots = "" if board["shots"] is None else f", {board['shots']}-shot"
        lines += [f"dev {board['metric']} ({board['mode']}{shots}):", ""]
        rows = []
        for entry in board["entries"]:
            if entry["kind"] == "published":
                rows.append([entry["rank"], entry["model"], fmt.number(entry["value"]),
                             f"published, CLUE {entry['version']} data", entry["source"]])
            else:
                rows.append([entry.get("rank", "—"), f"**{entry['model']}**",
                             _with(entry["value"], fmt.interval(entry.get("interval"))),
                             "this report" if entry["comparable"] else f"not comparable: {entry['reason']}", ""])
        lines += [md_table(["rank", "model", "value", "what", "source"], rows), ""]
        if not any(entry["kind"] == "run" for entry in board["entries"]):
            lines += [f"No run in this report was used this way ({board['mode']}{shots}).", ""]
    if not task["boards"]:
        lines += ["No published dev score to set the runs beside.", ""]
    return lines


def render_markdown(report: Mapping[str, Any], sections: Sequence[tuple[str, list[str]]] = ()) -> str:
    """``report.md``; ``sections`` are the plugins' views as ``(title, lines)``, in page order."""
    lines = ["# CLUE report", ""]
    if report["warnings"]:
        lines += ["**Read this first:**", "", *(f"- {w}" for w in report["warnings"]), ""]
    if report["rows"]:
        lines += ["## Leaderboard", "", leaderboard(report), "",
                  "Cells: primary dev metric with its 95% bootstrap interval (one run) or ± std over seeds. "
                  "Group scores average the members' primary metric; `k/n` marks an average over only some "
                  "members, which is not a leaderboard score.", ""]
        lines += ["## Beside published scores", ""]
        for task in report["tasks"]:
            lines += _task(task)
    for title, section in sections:
        lines += [f"## {title}", "", *section, *([""] if section and section[-1] else [])]
    return "\n".join(lines).rstrip() + "\n"
