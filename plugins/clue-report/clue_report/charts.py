"""The report's own charts (leaderboard overview, confusion matrices, score by context length, runs
beside published scores), drawn through :mod:`clue_report.drawers` into PNG bytes.

Report sections draw theirs through :class:`clue_report.kit.Kit`, with the same drawers and font.
Every text drawn goes through :meth:`FontChoice.label`, which swaps a Chinese name for its
English one when no CJK font is installed: never a box for a glyph.
"""

from __future__ import annotations

from typing import Any

from matplotlib.figure import Figure

from clue_report.drawers import PALETTE
from clue_report.drawers import render as _render
from clue_report.fonts import FontChoice
from clue_report.kit import Chart

#: Confusion matrices are drawn up to this many labels; above it (IFLYTEK: 119) only the pairs table is shown.
MAX_MATRIX_LABELS = 20
PUBLISHED_COLOR = "#9aa0a6"


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
    """The first board with a run beside published scores: a dev board, else one of a scored split
    (FewCLUE's test_public, whose boards carry ``split``)."""
    board = next((b for b in (*task["boards"], *task.get("scored_boards", ()))
                  if any(e["kind"] == "run" for e in b["entries"])), None)
    if board is None:
        return None
    split = board.get("split", "dev")
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
        axes.set_xlabel(f"{split} {board['metric']} ({board['mode']}{shots}); grey: published")
        axes.grid(axis="x", alpha=0.3)

    return Chart(f"chart-published-{task['name']}", f"{task['name']}: runs beside published {split} scores",
                 f"task-{task['name']}", _render(choice, 7, 1 + 0.28 * len(entries), draw))


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
    return [chart for chart in charts if chart is not None]
