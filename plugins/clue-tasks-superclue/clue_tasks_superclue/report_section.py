"""The SuperCLUE view of ``clue-core report``: a report section this plugin registers.

``clue_report_sections`` (in :mod:`clue_tasks_superclue.hooks`) names the three functions
here. :func:`build` checks every ``comparison.json`` among the report's paths (written by
``clue-core compare``, read by :mod:`clue_tasks_superclue.compare.comparison_file`); its list
is ``report.json``'s ``comparisons``. :func:`html` shows each comparison's scores per
dimension and category, win/tie/loss against the reference (from grades and, when judged so,
pairwise), the ratings (Bradley–Terry with its interval, Elo, SuperCLUE points; a comparison
written before them has none and shows none), the capability quadrant, the maturity index, and
the judges' agreement, with each other (a panel's α, κ, position consistency, each judge's mean
grade) and with people (the sheet's figures with their intervals), side by side
(:mod:`clue_tasks_superclue.report_agreement`);
:func:`markdown` gives the same tables for ``report.md``. Everything is drawn through the
report's ``kit`` (tables, numbers, charts from plain data): this plugin imports neither the
report nor matplotlib.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from clue_tasks_superclue import report_agreement
from clue_tasks_superclue.compare.comparison_file import english, load_comparison


def build(files: Sequence[Path], report: Mapping[str, Any]) -> tuple[list[dict[str, Any]] | None, list[str]]:
    """Every comparison file, checked (a bad field is one ClueError naming file and field), and the soft
    problems each one has as warnings naming its file."""
    comparisons = [load_comparison(Path(path)) for path in files]
    warnings = [f"{c['path']}: {w}" for c in comparisons for w in c["warnings"]]
    return comparisons or None, warnings


def _scores(comparison: Mapping[str, Any], key: str, named: list[Mapping[str, Any]], kit: Any) -> str:
    escape, num = kit.escape, kit.num
    names = [item["name"] for item in named]
    headers = ["model", "total", *(f"{escape(item['name'])}<br><small>{escape(item['name_en'])}</small>"
                                   for item in named)]
    rows = [[escape(m["name"]), num(m["total"]), *(num(m[key].get(n)) for n in names)] for m in comparison["models"]]
    return kit.table(headers, rows)


def _outcomes(comparison: Mapping[str, Any], kit: Any, key: str = "vs_reference", how: str = "") -> str:
    escape = kit.escape
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
            + kit.table(["model", "overall", *map(escape, dims)], rows))


def _rated(comparison: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The models, best Bradley–Terry rating first (those without one last, in the file's order)."""
    fitted = comparison.get("bradley_terry") or {}
    return sorted(comparison["models"], key=lambda m: -fitted[m["name"]]["rating"] if m["name"] in fitted else 0)


def _points_cell(model: Mapping[str, Any], reference: str) -> str:
    if model["name"] == reference:
        return "(reference)"
    if model.get("points") is None:
        return "—"
    of = f" / {model['points_max']}" if model.get("points_max") is not None else ""
    return f"{model['points']:g}{of}"


def ratings_note(comparison: Mapping[str, Any]) -> str:
    """What the ratings' numbers are on: the scale, the bootstrap, Elo's K and orders, the points' rule."""
    parts = ["Bradley–Terry: maximum-likelihood fit over every pair of models' per-question games (ties half "
             "a win each); the models' mean is 1000 and a gap of 400 means odds of 10 to 1"]
    if comparison.get("bradley_terry_bootstrap"):
        parts.append(f"95% intervals from {comparison['bradley_terry_bootstrap']} bootstrap rounds over questions")
    if comparison.get("bradley_terry_prior"):
        parts.append("fitted with one virtual tie per model (the plain MLE diverges: a model never loses)")
    if comparison.get("elo") is not None:
        parts.append(f"Elo: online, K = {comparison.get('elo_k', '?'):g}, mean of {comparison.get('elo_orders', '?')} "
                     "shuffled orders" if comparison.get("elo_k") is not None else "Elo: online updates")
    parts.append(f"points against {comparison['reference']}: win 3, tie 1, loss 0 per question")
    return "; ".join(parts) + "."


def _ratings(comparison: Mapping[str, Any], kit: Any) -> str:
    """Bradley–Terry rating with its interval, Elo and points, one row per model (nothing for older files)."""
    fitted, board = comparison.get("bradley_terry"), comparison.get("elo")
    if fitted is None and board is None:
        return ""
    escape, num = kit.escape, kit.num
    rows = []
    for model in _rated(comparison):
        bt = (fitted or {}).get(model["name"])
        interval = f"{bt['ci_low']:.1f} – {bt['ci_high']:.1f}" if bt else "—"
        rows.append([escape(model["name"]), num(bt["rating"] if bt else None, detail=interval),
                     num((board or {}).get(model["name"])), escape(_points_cell(model, comparison["reference"]))])
    return ("<h4>Ratings</h4><p class='muted'>" + escape(ratings_note(comparison)) + "</p>"
            + kit.table(["model", "Bradley–Terry (95% interval)", "Elo", "points"], rows))


def _human_ranking(comparison: Mapping[str, Any], kit: Any) -> str:
    human = comparison.get("human_ranking")
    if not human:
        return ""
    return ("<h4>Agreement with a human ranking</h4><p>" + kit.escape(human["file"]) + f" ({human['n']} models, "
            f"totals against human scores): Pearson r = {human['pearson']:.3f} (p = {human['pearson_p']:.3g}), "
            f"Spearman ρ = {human['spearman']:.3f} (p = {human['spearman_p']:.3g}).</p>")


def _quadrant(comparison: Mapping[str, Any], kit: Any) -> str:
    escape, num = kit.escape, kit.num
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
    return "<h4>Capability quadrant</h4>" + axes + kit.table(
        ["model", escape(x["name"]), escape(y["name"]), "quadrant"], rows)


def _maturity(comparison: Mapping[str, Any], kit: Any) -> str:
    escape, num = kit.escape, kit.num
    if not comparison["maturity"]:
        return ""
    rows = [[escape(m["dimension"]), num(m["index"]), escape(m["band"])] for m in comparison["maturity"]]
    definition = comparison.get("maturity_definition") or "Bands: high 0.8–1.0, middle 0.6–0.8, low below 0.6."
    return ("<h4>Maturity index</h4><p class='muted'>" + escape(definition) + "</p>"
            + kit.table(["dimension", "index", "band"], rows))


def _model(model: Mapping[str, Any]) -> tuple[str, str | None]:
    return model["name"], model.get("name_en")


def _score_charts(index: int, comparison: Mapping[str, Any], kit: Any) -> str:
    """Scores per dimension and per category, and win/tie/loss against the reference, as bars."""
    models = comparison["models"]
    parts = []
    for key, title, height in (("dimensions", "Score per dimension", 3.8), ("categories", "Score per category", 3.6)):
        named = comparison[key]
        if named:
            parts.append(kit.grouped_bars(
                f"comparison-{index}-{key}", title, [(n["name"], n["name_en"]) for n in named],
                [(_model(m), [m[key].get(n["name"], 0.0) for n in named]) for m in models], height=height))
    versus = [m for m in models if "vs_reference" in m]
    if versus:
        reference = comparison["reference"]
        parts.append(kit.stacked_bars(
            f"comparison-{index}-outcomes", f"Win / tie / loss against {reference}",
            [(_model(m), m["vs_reference"]["overall"]) for m in versus],
            xlabel=(f"% of questions against {reference}", "% of questions against the reference")))
    return "".join(parts)


def _quadrant_chart(index: int, comparison: Mapping[str, Any], kit: Any) -> str:
    quadrant = comparison["quadrant"]
    placed = [m for m in comparison["models"] if m.get("quadrant") and None not in m["quadrant"].values()]
    if not quadrant or not placed:
        return ""
    dim_english = english(comparison["dimensions"])

    def axis_label(axis: Mapping[str, Any]) -> tuple[str, str]:
        chinese = f"{axis['name']}: {', '.join(axis['dimensions'])}"
        plain = f"{axis['name_en']}: {', '.join(dim_english.get(d, d) for d in axis['dimensions'])}"
        return chinese, plain

    return kit.quadrant(f"comparison-{index}-quadrant", "Capability quadrant",
                        [(_model(m), m["quadrant"]["x"], m["quadrant"]["y"]) for m in placed],
                        split=(quadrant["split"]["x"], quadrant["split"]["y"]),
                        xlabel=axis_label(quadrant["x"]), ylabel=axis_label(quadrant["y"]))


def html(comparisons: Sequence[Mapping[str, Any]], kit: Any) -> str:
    """The section's body: one sub-section per comparison file, its tables and charts."""
    escape = kit.escape
    parts = []
    for index, comparison in enumerate(comparisons, 1):
        section = f"comparison-{index}"
        judge = f", judge {comparison['judge']}" if comparison.get("judge") else ""
        margin = f", tie within ±{comparison['tie_margin']}" if comparison.get("tie_margin") is not None else ""
        parts.append(f"<h3 id='{section}'>{escape(comparison['title'])}</h3><p class='muted'>"
                     f"{escape(comparison['path'])}: {len(comparison['models'])} models, reference "
                     f"{escape(comparison['reference'])}{escape(judge)}{escape(margin)}</p>")
        parts.append("<h4>Per dimension</h4>" + _scores(comparison, "dimensions", comparison["dimensions"], kit))
        if comparison["categories"]:
            parts.append("<h4>Per category</h4>" + _scores(comparison, "categories", comparison["categories"], kit))
        parts.append(_score_charts(index, comparison, kit))
        parts.append(_outcomes(comparison, kit))
        parts.append(_outcomes(comparison, kit, "vs_reference_pairwise", " (pairwise verdicts)"))
        parts.append(_ratings(comparison, kit))
        parts.append(_quadrant(comparison, kit))
        parts.append(_quadrant_chart(index, comparison, kit))
        parts.append(_maturity(comparison, kit))
        parts.append(_human_ranking(comparison, kit))
        parts.append(report_agreement.html(comparison, kit))
    return "".join(parts)


def _shares(kit: Any, models: Sequence[Mapping[str, Any]], key: str) -> str:
    return kit.md_table(["model", "win %", "tie %", "loss %"],
                        [[m["name"], *(kit.number(m[key]["overall"][k], 1) for k in ("win", "tie", "loss"))]
                         for m in models])


def markdown(comparisons: Sequence[Mapping[str, Any]], kit: Any) -> list[str]:
    """``report.md``'s lines: the same tables, per comparison."""
    lines: list[str] = []
    for comparison in comparisons:
        lines += _markdown_one(comparison, kit)
    return lines


def _markdown_ratings(comparison: Mapping[str, Any], kit: Any) -> list[str]:
    fitted, board = comparison.get("bradley_terry"), comparison.get("elo")
    if fitted is None and board is None:
        return []
    number = kit.number
    rows = []
    for model in _rated(comparison):
        bt = (fitted or {}).get(model["name"])
        rows.append([model["name"], number(bt["rating"] if bt else None, 1),
                     f"{bt['ci_low']:.1f} – {bt['ci_high']:.1f}" if bt else "—",
                     number((board or {}).get(model["name"]), 1), _points_cell(model, comparison["reference"])])
    return ["", kit.md_table(["model", "Bradley–Terry", "95% interval", "Elo", "points"], rows), "",
            ratings_note(comparison)]


def _markdown_one(comparison: Mapping[str, Any], kit: Any) -> list[str]:
    number, md_table = kit.number, kit.md_table
    dims = comparison["dimensions"]
    text = kit.md_text  # the file's texts, shown as text wherever report.md is rendered
    lines = [f"### {text(comparison['title'])}", "", f"Reference: {text(comparison['reference'])}.", ""]
    lines.append(md_table(["model", "total", *(d["name"] for d in dims)],
                          [[m["name"], number(m["total"]), *(number(m["dimensions"].get(d["name"])) for d in dims)]
                           for m in comparison["models"]]))
    if comparison["categories"]:
        cats = comparison["categories"]
        lines += ["", md_table(["model", *(c["name"] for c in cats)],
                               [[m["name"], *(number(m["categories"].get(c["name"])) for c in cats)]
                                for m in comparison["models"]])]
    versus = [m for m in comparison["models"] if m.get("vs_reference")]
    if versus:
        lines += ["", _shares(kit, versus, "vs_reference")]
    lines += _markdown_ratings(comparison, kit)
    quadrant = comparison["quadrant"]
    if quadrant:
        x, y = quadrant["x"], quadrant["y"]
        lines += ["", text(f"Quadrant: x = {x['name']} (mean of {', '.join(x['dimensions'])}), y = {y['name']} "
                           f"(mean of {', '.join(y['dimensions'])})."), "",
                  md_table(["model", x["name"], y["name"]],
                           [[m["name"], number(m["quadrant"]["x"]), number(m["quadrant"]["y"])]
                            for m in comparison["models"] if m.get("quadrant")])]
    if comparison["maturity"]:
        lines += ["", md_table(["dimension", "maturity index", "band"],
                               [[m["dimension"], number(m["index"]), m["band"]] for m in comparison["maturity"]])]
    pairwise = [m for m in comparison["models"] if m.get("vs_reference_pairwise")]
    if pairwise:
        lines += ["", "Pairwise verdicts (each asked twice, the answers' positions swapped):", "",
                  _shares(kit, pairwise, "vs_reference_pairwise")]
    if comparison.get("maturity_definition"):
        lines += ["", f"Maturity: {text(comparison['maturity_definition'])}."]
    human = comparison.get("human_ranking")
    if human:
        lines += ["", f"Human ranking ({human['n']} models): Pearson {human['pearson']:.3f} "
                      f"(p {human['pearson_p']:.3g}), Spearman {human['spearman']:.3f} (p {human['spearman_p']:.3g})."]
    lines += report_agreement.markdown(comparison, kit)
    return [*lines, ""]
