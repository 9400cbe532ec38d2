"""The SuperCLUE section of ``index.html``: bars, win/tie/loss, the quadrant and maturity."""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from typing import Any

from clue_core.report.charts import Chart
from clue_core.report.html import figure, num, table


def _scores(comparison: Mapping[str, Any], key: str, named: list[Mapping[str, Any]]) -> str:
    names = [item["name"] for item in named]
    headers = ["model", "total", *(f"{escape(item['name'])}<br><small>{escape(item['name_en'])}</small>"
                                   for item in named)]
    rows = [[escape(m["name"]), num(m["total"]), *(num(m[key].get(n)) for n in names)] for m in comparison["models"]]
    return table(headers, rows)


def _outcomes(comparison: Mapping[str, Any], key: str = "vs_reference", how: str = "") -> str:
    dims = [d["name"] for d in comparison["dimensions"]]
    rows = []
    for model in comparison["models"]:
        versus = model.get(key)
        if not versus:
            continue
        cells = [escape(model["name"])]
        for part in [versus["overall"], *(versus["dimensions"].get(d) for d in dims)]:
            cells.append(f'<td class="num">{part["win"]:.1f} / {part["tie"]:.1f} / {part["loss"]:.1f}</td>'
                         if part else "—")
        rows.append(cells)
    if not rows:
        return ""
    return ("<h4>Win / tie / loss (%) against " + escape(comparison["reference"]) + escape(how) + "</h4>"
            + table(["model", "overall", *map(escape, dims)], rows))


def _human_ranking(comparison: Mapping[str, Any]) -> str:
    human = comparison.get("human_ranking")
    if not human:
        return ""
    return ("<h4>Agreement with a human ranking</h4><p>" + escape(human["file"]) + f" ({human['n']} models, "
            f"totals against human scores): Pearson r = {human['pearson']:.3f} (p = {human['pearson_p']:.3g}), "
            f"Spearman ρ = {human['spearman']:.3f} (p = {human['spearman_p']:.3g}).</p>")


def _judge_agreement(comparison: Mapping[str, Any]) -> str:
    agreement = comparison.get("judge_agreement")
    if not agreement:
        return ""
    grades = agreement["by_grade"]
    return ("<h4>Judge agreement with people</h4><p>" + escape(agreement["file"]) + f": {agreement['graded']} "
            f"judgments graded by people, {agreement['acceptable_share']:.1f}% graded 及格 or better.</p>"
            + table(list(grades), [[f'<td class="num">{count}</td>' for count in grades.values()]]))


def _quadrant(comparison: Mapping[str, Any]) -> str:
    quadrant = comparison["quadrant"]
    if not quadrant:
        return ""
    x, y, split = quadrant["x"], quadrant["y"], quadrant["split"]
    rows = []
    for model in comparison["models"]:
        position = model.get("quadrant") or {}
        if None in position.values() or not position:
            continue
        side = ("high" if position["x"] >= split["x"] else "low", "high" if position["y"] >= split["y"] else "low")
        rows.append([escape(model["name"]), num(position["x"]), num(position["y"]),
                     escape(f"{x['name']} {side[0]}, {y['name']} {side[1]}")])
    axes = (f"<p>x: <b>{escape(x['name'])}</b> ({escape(x['name_en'])}) = mean of {escape(', '.join(x['dimensions']))}"
            f"; y: <b>{escape(y['name'])}</b> ({escape(y['name_en'])}) = mean of "
            f"{escape(', '.join(y['dimensions']))}. Split lines at x = {split['x']:.2f}, y = {split['y']:.2f} "
            f"({escape(quadrant['split_source'])}).</p>")
    return "<h4>Capability quadrant</h4>" + axes + table(
        ["model", escape(x["name"]), escape(y["name"]), "quadrant"], rows)


def _maturity(comparison: Mapping[str, Any]) -> str:
    if not comparison["maturity"]:
        return ""
    rows = [[escape(m["dimension"]), num(m["index"]), escape(m["band"])] for m in comparison["maturity"]]
    definition = comparison.get("maturity_definition") or "Bands: high 0.8–1.0, middle 0.6–0.8, low below 0.6."
    return ("<h4>Maturity index</h4><p class='muted'>" + escape(definition) + "</p>"
            + table(["dimension", "index", "band"], rows))


def superclue_section(report: Mapping[str, Any], charts: Mapping[str, Chart]) -> str:
    if not report["comparisons"]:
        return ""
    parts = ["<section id='superclue'><h2>SuperCLUE</h2>"]
    for index, comparison in enumerate(report["comparisons"], 1):
        section = f"comparison-{index}"
        judge = f", judge {comparison['judge']}" if comparison.get("judge") else ""
        margin = f", tie within ±{comparison['tie_margin']}" if comparison.get("tie_margin") is not None else ""
        parts.append(f"<h3 id='{section}'>{escape(comparison['title'])}</h3><p class='muted'>"
                     f"{escape(comparison['path'])}: {len(comparison['models'])} models, reference "
                     f"{escape(comparison['reference'])}{escape(judge)}{escape(margin)}</p>")
        parts.append("<h4>Per dimension</h4>" + _scores(comparison, "dimensions", comparison["dimensions"]))
        if comparison["categories"]:
            parts.append("<h4>Per category</h4>" + _scores(comparison, "categories", comparison["categories"]))
        for chart in charts.values():
            if chart.section == section and not chart.id.endswith("-quadrant"):
                parts.append(figure(chart))
        parts.append(_outcomes(comparison))
        parts.append(_outcomes(comparison, "vs_reference_pairwise", " (pairwise verdicts)"))
        parts.append(_quadrant(comparison))
        if f"chart-{section}-quadrant" in charts:
            parts.append(figure(charts[f"chart-{section}-quadrant"]))
        parts.append(_maturity(comparison))
        parts.append(_human_ranking(comparison))
        parts.append(_judge_agreement(comparison))
    return "".join(parts) + "</section>"
