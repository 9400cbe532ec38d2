"""The report's charts, drawn with matplotlib's Agg canvas into PNG bytes.

Only the report imports matplotlib, and only through this module; figures are built on
``matplotlib.figure.Figure`` with an Agg canvas, so no pyplot state or GUI backend is
touched. Every text drawn goes through :meth:`FontChoice.label`, which swaps a Chinese
name for its English one when no CJK font is installed: never a box for a glyph.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import matplotlib
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from clue_core.report.fonts import FontChoice
from clue_tasks_superclue.compare.comparison_file import english

DPI = 100
#: Confusion matrices are drawn up to this many labels; above it (IFLYTEK: 119) only the pairs table is shown.
MAX_MATRIX_LABELS = 20
PALETTE = ("#1a73e8", "#e8710a", "#188038", "#d93025", "#9334e6", "#12b5cb", "#f9ab00", "#5f6368", "#b31412",
           "#0d652d")
PUBLISHED_COLOR = "#9aa0a6"
OUTCOME_COLORS = {"win": "#188038", "tie": "#bdc1c6", "loss": "#d93025"}


@dataclass(frozen=True)
class Chart:
    """One embedded image: its id (the page's anchor), title, the section it belongs to, and PNG bytes."""

    id: str
    title: str
    section: str
    png: bytes


def _render(choice: FontChoice, width: float, height: float, draw: Callable[[Figure], None]) -> bytes:
    with matplotlib.rc_context(choice.rc()):
        figure = Figure(figsize=(width, height), dpi=DPI, layout="constrained")
        FigureCanvasAgg(figure)
        draw(figure)
        buffer = io.BytesIO()
        figure.savefig(buffer, format="png")
    return buffer.getvalue()


def _row_colors(report: dict[str, Any]) -> dict[str, str]:
    return {row["id"]: PALETTE[i % len(PALETTE)] for i, row in enumerate(report["rows"])}


def _error(value: float, interval: dict[str, Any] | None, spread: dict[str, Any] | None) -> tuple[float, float]:
    if spread:
        return spread["std"], spread["std"]
    if interval and "low" in interval:
        return max(0.0, value - interval["low"]), max(0.0, interval["high"] - value)
    return 0.0, 0.0


def overview(report: dict[str, Any], choice: FontChoice) -> Chart | None:
    rows = report["rows"]
    tasks = [t["name"] for t in report["tasks"]]
    if not rows or not tasks:
        return None
    colors = _row_colors(report)
    bar = 0.8 / len(rows)

    def draw(figure: Figure) -> None:
        axes = figure.add_subplot()
        for i, row in enumerate(rows):
            ys, xs, errors = [], [], [[], []]
            for j, task in enumerate(tasks):
                cell = row["cells"].get(task)
                if cell is None or cell["value"] is None:
                    continue
                low, high = _error(cell["value"], cell["intervals"].get(cell["metric"]),
                                   (cell.get("seed_spread") or {}).get(cell["metric"]))
                ys.append(j + i * bar - 0.4 + bar / 2)
                xs.append(cell["value"])
                errors[0].append(low)
                errors[1].append(high)
            axes.barh(ys, xs, height=bar * 0.9, xerr=errors, color=colors[row["id"]], capsize=2,
                      label=choice.label(row["label"], row["model"]), alpha=1.0 if row["comparable"] else 0.55)
        axes.set_yticks(range(len(tasks)), [choice.label(t) for t in tasks])
        axes.invert_yaxis()
        axes.set_xlim(0, 100)
        axes.set_xlabel("primary dev metric (0-100); bars: 95% bootstrap interval, or ± std over seeds")
        figure.legend(fontsize="small", loc="outside lower center", ncols=min(len(rows), 3))
        axes.grid(axis="x", alpha=0.3)

    height = 1.6 + 0.2 * ((len(rows) + 2) // 3) + len(tasks) * (0.22 * len(rows) + 0.25)
    return Chart("chart-overview", "Primary dev metric per task", "leaderboard", _render(choice, 9, height, draw))


def confusion(run: dict[str, Any], row_label: str, choice: FontChoice) -> Chart | None:
    data = run["analysis"].get("confusion")
    if not data or len(data["columns"]) > MAX_MATRIX_LABELS or not data["labels"]:
        return None
    descriptions = data["descriptions"]

    def name(label: str) -> str:
        description = descriptions.get(label)
        text = f"{label} {description}" if description else label
        return choice.label(text[:22], label)

    def draw(figure: Figure) -> None:
        axes = figure.add_subplot()
        matrix = data["matrix"]
        image = axes.imshow(matrix, cmap="Blues")
        top = max((max(r) for r in matrix), default=0)
        for i, line in enumerate(matrix):
            for j, count in enumerate(line):
                if count:
                    axes.text(j, i, str(count), ha="center", va="center", fontsize=7,
                              color="white" if count > top / 2 else "black")
        axes.set_xticks(range(len(data["columns"])), [name(c) for c in data["columns"]], rotation=60, ha="right",
                        fontsize=7)
        axes.set_yticks(range(len(data["labels"])), [name(c) for c in data["labels"]], fontsize=7)
        axes.set_xlabel("predicted")
        axes.set_ylabel("gold")
        axes.set_title(choice.label(f"{run['task']} · {row_label}", run["task"]), fontsize=9)
        figure.colorbar(image, ax=axes, shrink=0.7)

    size = 2.4 + 0.3 * len(data["columns"])
    return Chart(f"chart-confusion-{run['id']}", f"{run['task']}: confusion matrix ({row_label})",
                 f"task-{run['task']}", _render(choice, size + 1, size, draw))


def context_length(task: dict[str, Any], report: dict[str, Any], choice: FontChoice) -> Chart | None:
    lines = []
    for row in report["rows"]:
        cell = row["cells"].get(task["name"])
        if cell and len(cell["runs"]) >= 1:
            run = next(r for r in report["runs"] if r["id"] == cell["runs"][0])
            bins = run["analysis"].get("context_length") or []
            if bins:
                lines.append((row, bins))
    if not lines:
        return None
    colors = _row_colors(report)

    def draw(figure: Figure) -> None:
        axes = figure.add_subplot()
        for row, bins in lines:
            xs = [(b["low"] + b["high"]) / 2 for b in bins]
            axes.plot(xs, [b["value"] for b in bins], marker="o", color=colors[row["id"]],
                      label=choice.label(row["label"], row["model"]))
            for x, b in zip(xs, bins):
                axes.annotate(f"n={b['n']}", (x, b["value"]), fontsize=6, textcoords="offset points",
                              xytext=(0, 4), ha="center")
        axes.set_xlabel("context length (characters; bins at quantiles)")
        axes.set_ylabel(f"{lines[0][1][0]['metric']} (0-100)")
        axes.set_ylim(-5, 105)
        axes.set_title(f"{task['name']}: {lines[0][1][0]['metric']} by context length", fontsize=9)
        axes.legend(fontsize="small")
        axes.grid(alpha=0.3)

    return Chart(f"chart-length-{task['name']}", f"{task['name']}: score by context length", f"task-{task['name']}",
                 _render(choice, 7, 3.4, draw))


def published_board(task: dict[str, Any], report: dict[str, Any], choice: FontChoice) -> Chart | None:
    board = next((b for b in task["boards"] if any(e["kind"] == "run" for e in b["entries"])), None)
    if board is None:
        return None
    entries = board["entries"]
    colors = _row_colors(report)
    names = [choice.label(f"{e['model']} (published {e['version']})" if e["kind"] == "published" else
                          e["model"] + ("" if e["comparable"] else " (not comparable)"), e["model"]) for e in entries]
    shots = "" if board["shots"] is None else f", {board['shots']}-shot"

    def draw(figure: Figure) -> None:
        axes = figure.add_subplot()
        for y, entry in enumerate(entries):
            if entry["kind"] == "published":
                axes.barh(y, entry["value"], color=PUBLISHED_COLOR)
            else:
                low, high = _error(entry["value"], entry.get("interval"), None)
                axes.barh(y, entry["value"], xerr=[[low], [high]], capsize=3, color=colors[entry["row"]],
                          hatch=None if entry["comparable"] else "//", alpha=1.0 if entry["comparable"] else 0.5)
            axes.text(entry["value"] + 1, y, f"{entry['value']:.2f}", va="center", fontsize=7)
        axes.set_yticks(range(len(entries)), names, fontsize=7)
        axes.invert_yaxis()
        axes.set_xlim(0, 105)
        axes.set_xlabel(f"dev {board['metric']} ({board['mode']}{shots}); grey: published")
        axes.grid(axis="x", alpha=0.3)

    return Chart(f"chart-published-{task['name']}", f"{task['name']}: runs beside published dev scores",
                 f"task-{task['name']}", _render(choice, 7, 1 + 0.28 * len(entries), draw))


def _grouped_bars(figure: Figure, names: Sequence[str], models: Sequence[dict[str, Any]], key: str,
                  choice: FontChoice, labels: dict[str, str]) -> None:
    axes = figure.add_subplot()
    width = 0.8 / max(len(models), 1)
    for i, model in enumerate(models):
        values = [model[key].get(name, 0.0) for name in names]
        axes.bar([j + i * width - 0.4 + width / 2 for j in range(len(names))], values, width=width * 0.95,
                 color=PALETTE[i % len(PALETTE)], label=choice.label(model["name"], model.get("name_en")))
    axes.set_xticks(range(len(names)), [choice.label(n, labels.get(n)) for n in names], rotation=30, ha="right")
    axes.set_ylim(0, 100)
    axes.set_ylabel("score (0-100)")
    axes.legend(fontsize="small", ncols=min(len(models), 4))
    axes.grid(axis="y", alpha=0.3)


def superclue_charts(index: int, comparison: dict[str, Any], choice: FontChoice) -> list[Chart]:
    section = f"comparison-{index}"
    models = comparison["models"]
    charts = []
    dims = [d["name"] for d in comparison["dimensions"]]
    dim_english = english(comparison["dimensions"])
    charts.append(Chart(f"chart-{section}-dimensions", "Score per dimension", section, _render(
        choice, max(6, 0.9 * len(dims) + 2), 3.8, lambda f: _grouped_bars(f, dims, models, "dimensions", choice,
                                                                         dim_english))))
    if comparison["categories"]:
        cats = [c["name"] for c in comparison["categories"]]
        charts.append(Chart(f"chart-{section}-categories", "Score per category", section, _render(
            choice, max(6, 0.9 * len(cats) + 2), 3.6,
            lambda f: _grouped_bars(f, cats, models, "categories", choice, english(comparison["categories"])))))
    versus = [m for m in models if "vs_reference" in m]
    if versus:
        def draw_outcomes(figure: Figure) -> None:
            axes = figure.add_subplot()
            for y, model in enumerate(versus):
                left = 0.0
                for outcome in ("win", "tie", "loss"):
                    share = model["vs_reference"]["overall"][outcome]
                    axes.barh(y, share, left=left, color=OUTCOME_COLORS[outcome],
                              label=outcome if y == 0 else None)
                    if share >= 6:
                        axes.text(left + share / 2, y, f"{share:.1f}%", ha="center", va="center", fontsize=7)
                    left += share
            axes.set_yticks(range(len(versus)), [choice.label(m["name"], m.get("name_en")) for m in versus])
            axes.invert_yaxis()
            axes.set_xlim(0, 100)
            axes.set_xlabel(choice.label(f"% of questions against {comparison['reference']}", "% of questions "
                                         "against the reference"))
            axes.legend(fontsize="small", ncols=3, loc="lower right")

        charts.append(Chart(f"chart-{section}-outcomes", f"Win / tie / loss against {comparison['reference']}",
                            section, _render(choice, 7, 1.2 + 0.4 * len(versus), draw_outcomes)))
    quadrant = comparison["quadrant"]
    placed = [m for m in models if m.get("quadrant") and None not in m["quadrant"].values()]
    if quadrant and placed:
        def axis_label(axis: dict[str, Any]) -> str:
            chinese = f"{axis['name']}: {', '.join(axis['dimensions'])}"
            plain = f"{axis['name_en']}: {', '.join(dim_english.get(d, d) for d in axis['dimensions'])}"
            return choice.label(chinese, plain)

        def draw_quadrant(figure: Figure) -> None:
            axes = figure.add_subplot()
            for i, model in enumerate(placed):
                x, y = model["quadrant"]["x"], model["quadrant"]["y"]
                axes.scatter([x], [y], color=PALETTE[i % len(PALETTE)], s=40)
                axes.annotate(choice.label(model["name"], model.get("name_en")), (x, y), fontsize=7,
                              textcoords="offset points", xytext=(4, 4))
            axes.axvline(quadrant["split"]["x"], color="#5f6368", lw=0.8, ls="--")
            axes.axhline(quadrant["split"]["y"], color="#5f6368", lw=0.8, ls="--")
            xs = [m["quadrant"]["x"] for m in placed] + [quadrant["split"]["x"]]
            ys = [m["quadrant"]["y"] for m in placed] + [quadrant["split"]["y"]]
            axes.set_xlim(max(0, min(xs) - 8), min(100, max(xs) + 8))
            axes.set_ylim(max(0, min(ys) - 8), min(100, max(ys) + 8))
            axes.set_xlabel(axis_label(quadrant["x"]), fontsize=8, wrap=True)
            axes.set_ylabel(axis_label(quadrant["y"]), fontsize=8, wrap=True)
            axes.grid(alpha=0.3)

        charts.append(Chart(f"chart-{section}-quadrant", "Capability quadrant", section,
                            _render(choice, 6.5, 5.5, draw_quadrant)))
    return charts


def draw_charts(report: dict[str, Any], choice: FontChoice) -> list[Chart]:
    """Every chart of the report, in page order."""
    charts = [overview(report, choice)]
    labels = {row["id"]: row["label"] for row in report["rows"]}
    for task in report["tasks"]:
        charts.append(published_board(task, report, choice))
        for row in report["rows"]:
            cell = row["cells"].get(task["name"])
            if cell:
                run = next(r for r in report["runs"] if r["id"] == cell["runs"][0])
                charts.append(confusion(run, labels[row["id"]], choice))
        charts.append(context_length(task, report, choice))
    for index, comparison in enumerate(report["comparisons"], 1):
        charts += superclue_charts(index, comparison, choice)
    return [chart for chart in charts if chart is not None]
