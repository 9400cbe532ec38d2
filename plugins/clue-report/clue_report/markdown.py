"""``report.md``: the report's tables in GitHub-flavoured Markdown, for a README or an issue."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from clue_core.report import format as fmt


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def md_table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    lines = ["| " + " | ".join(map(_cell, headers)) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(map(_cell, row)) + " |" for row in rows]
    return "\n".join(lines)


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


def _comparison(comparison: Mapping[str, Any]) -> list[str]:
    dims = comparison["dimensions"]
    lines = [f"### {comparison['title']}", "", f"Reference: {comparison['reference']}.", ""]
    lines.append(md_table(["model", "total", *(d["name"] for d in dims)],
                          [[m["name"], fmt.number(m["total"]), *(fmt.number(m["dimensions"].get(d["name"]))
                                                                 for d in dims)] for m in comparison["models"]]))
    if comparison["categories"]:
        cats = comparison["categories"]
        lines += ["", md_table(["model", *(c["name"] for c in cats)],
                               [[m["name"], *(fmt.number(m["categories"].get(c["name"])) for c in cats)]
                                for m in comparison["models"]])]
    versus = [m for m in comparison["models"] if m.get("vs_reference")]
    if versus:
        lines += ["", md_table(["model", "win %", "tie %", "loss %"],
                               [[m["name"], *(fmt.number(m["vs_reference"]["overall"][k], 1)
                                              for k in ("win", "tie", "loss"))] for m in versus])]
    quadrant = comparison["quadrant"]
    if quadrant:
        x, y = quadrant["x"], quadrant["y"]
        lines += ["", f"Quadrant: x = {x['name']} (mean of {', '.join(x['dimensions'])}), y = {y['name']} "
                      f"(mean of {', '.join(y['dimensions'])}).", "",
                  md_table(["model", x["name"], y["name"]],
                           [[m["name"], fmt.number(m["quadrant"]["x"]), fmt.number(m["quadrant"]["y"])]
                            for m in comparison["models"] if m.get("quadrant")])]
    if comparison["maturity"]:
        lines += ["", md_table(["dimension", "maturity index", "band"],
                               [[m["dimension"], fmt.number(m["index"]), m["band"]] for m in comparison["maturity"]])]
    pairwise = [m for m in comparison["models"] if m.get("vs_reference_pairwise")]
    if pairwise:
        lines += ["", "Pairwise verdicts (each asked twice, the answers' positions swapped):", "",
                  md_table(["model", "win %", "tie %", "loss %"],
                           [[m["name"], *(fmt.number(m["vs_reference_pairwise"]["overall"][k], 1)
                                          for k in ("win", "tie", "loss"))] for m in pairwise])]
    if comparison.get("maturity_definition"):
        lines += ["", f"Maturity: {comparison['maturity_definition']}."]
    human = comparison.get("human_ranking")
    if human:
        lines += ["", f"Human ranking ({human['n']} models): Pearson {human['pearson']:.3f} "
                      f"(p {human['pearson_p']:.3g}), Spearman {human['spearman']:.3f} (p {human['spearman_p']:.3g})."]
    agreement = comparison.get("judge_agreement")
    if agreement:
        lines += ["", f"Judge agreement: {agreement['acceptable_share']:.1f}% of {agreement['graded']} judgments "
                      f"graded 及格 or better."]
    return [*lines, ""]


def render_markdown(report: Mapping[str, Any]) -> str:
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
    if report["comparisons"]:
        lines += ["## SuperCLUE", ""]
        for comparison in report["comparisons"]:
            lines += _comparison(comparison)
    return "\n".join(lines).rstrip() + "\n"
