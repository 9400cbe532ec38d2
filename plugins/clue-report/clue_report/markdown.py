"""``report.md``: the report's tables in GitHub-flavoured Markdown, for a README or an issue."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from clue_report import format as fmt
from clue_report.kit import md_table


def _with(value: Any, detail: str) -> str:
    return f"{fmt.number(value)} {detail}".strip()


def _cell(cell: Mapping[str, Any]) -> str:
    """The primary dev metric with its uncertainty, then its scores on the scored splits (``; test_public …``)."""
    return "; ".join([_with(cell["value"], fmt.cell_detail(cell)), *fmt.scored_details(cell)])


def leaderboard(report: Mapping[str, Any]) -> str:
    tasks = report["tasks"]
    groups = [name for name in report["groups"] if any(name in row["groups"] for row in report["rows"])]
    rows = []
    for rank, row in enumerate(report["rows"], 1):
        label = row["label"] + ("" if row["comparable"] else " (not comparable)")
        cells = [rank, label, row["kind"], row["size"] or "—", fmt.usage(row), fmt.settings(row["settings"]) or "—"]
        cells += [fmt.group_text(row["groups"].get(name), split=True) for name in groups]
        cells += [_cell(c) if (c := row["cells"].get(t["name"])) else "—" for t in tasks]
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
    for board in task.get("scored_boards") or ():
        shots = "" if board["shots"] is None else f", {board['shots']}-shot"
        lines += [f"{board['split']} {board['metric']} ({board['mode']}{shots}), each run beside the published "
                  f"score of the data it trained on:", ""]
        rows = []
        for entry in board["entries"]:
            if entry["kind"] == "published":
                rows.append([entry.get("rank", "—"), entry["model"], fmt.number(entry["value"]),
                             f"published, {entry['split']} ({entry['version']})", entry["source"]])
            else:
                version = f" ({entry['version']})" if entry["version"] else ""
                rows.append([entry.get("rank", "—"), f"**{entry['model']}**", fmt.number(entry["value"]),
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
        text += (f" After `;` a cell's score on {', '.join(splits)}; a group marked `on {splits[0]}` averages "
                 f"that split, which its benchmark reports, since every member present has it.")
    if any(row.get("repeat") for row in report["rows"]):
        text += " A row ending in a repeat (`split 0–4`) holds the mean ± std over those trainings."
    return text


def render_markdown(report: Mapping[str, Any], sections: Sequence[tuple[str, list[str]]] = ()) -> str:
    """``report.md``; ``sections`` are the plugins' views as ``(title, lines)``, in page order."""
    lines = ["# CLUE report", ""]
    if report["warnings"]:
        lines += ["**Read this first:**", "", *(f"- {w}" for w in report["warnings"]), ""]
    if report["rows"]:
        lines += ["## Leaderboard", "", leaderboard(report), "",
                  "Cells: primary dev metric with its 95% bootstrap interval (one run) or ± std over seeds. "
                  "Group scores average the members' primary metric; `k/n` marks an average over only some "
                  "members, which is not a leaderboard score." + _legend(report), ""]
        lines += ["## Beside published scores", ""]
        for task in report["tasks"]:
            lines += _task(task)
    for title, section in sections:
        lines += [f"## {title}", "", *section, *([""] if section and section[-1] else [])]
    return "\n".join(lines).rstrip() + "\n"
