"""The report's generic chart drawers: plain data in, PNG bytes out (matplotlib, Agg canvas).

These are what :class:`clue_report.kit.Kit` draws for report sections (grouped bars, stacked
shares, a quadrant scatter) and what the report's own charts render through. Only the report
imports matplotlib, and only through this module and :mod:`clue_report.charts`; figures are
built on ``matplotlib.figure.Figure`` with an Agg canvas, so no pyplot state or GUI backend is
touched. Every text goes through :meth:`FontChoice.label` (a :data:`Label` is a text or a
``(text, english)`` pair): without a CJK font a Chinese name becomes its English one, never a box.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Mapping, Sequence

import matplotlib
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from clue_report.fonts import FontChoice, Label

DPI = 100
PALETTE = ("#1a73e8", "#e8710a", "#188038", "#d93025", "#9334e6", "#12b5cb", "#f9ab00", "#5f6368", "#b31412",
           "#0d652d")
#: Stacked parts with these names keep their meaning's colour (green win, grey tie, red loss).
PART_COLORS = {"win": "#188038", "tie": "#bdc1c6", "loss": "#d93025"}


def render(choice: FontChoice, width: float, height: float, draw: Callable[[Figure], None]) -> bytes:
    """``draw`` on a fresh figure of ``width`` × ``height`` inches, under the chosen font, as PNG bytes."""
    with matplotlib.rc_context(choice.rc()):
        figure = Figure(figsize=(width, height), dpi=DPI, layout="constrained")
        FigureCanvasAgg(figure)
        draw(figure)
        buffer = io.BytesIO()
        figure.savefig(buffer, format="png")
    return buffer.getvalue()


def text(choice: FontChoice, label: Label) -> str:
    """A :data:`Label` as drawable text under ``choice``."""
    if isinstance(label, str):
        return choice.label(label)
    return choice.label(label[0], label[1])


def grouped_bars(choice: FontChoice, groups: Sequence[Label], series: Sequence[tuple[Label, Sequence[float | None]]],
                 ylabel: str, ylim: tuple[float, float], height: float) -> bytes:
    """One bar per series in each group (a model's score per dimension); a missing value draws as 0."""
    width = 0.8 / max(len(series), 1)

    def draw(figure: Figure) -> None:
        axes = figure.add_subplot()
        for i, (label, values) in enumerate(series):
            axes.bar([j + i * width - 0.4 + width / 2 for j in range(len(groups))],
                     [0.0 if v is None else v for v in values], width=width * 0.95,
                     color=PALETTE[i % len(PALETTE)], label=text(choice, label))
        axes.set_xticks(range(len(groups)), [text(choice, g) for g in groups], rotation=30, ha="right")
        axes.set_ylim(*ylim)
        axes.set_ylabel(ylabel)
        axes.legend(fontsize="small", ncols=min(len(series), 4))
        axes.grid(axis="y", alpha=0.3)

    return render(choice, max(6, 0.9 * len(groups) + 2), height, draw)


def stacked_bars(choice: FontChoice, rows: Sequence[tuple[Label, Mapping[str, float]]], parts: Sequence[str],
                 xlabel: Label) -> bytes:
    """One horizontal bar per row, its ``parts`` (percentages) side by side from 0 to 100."""
    colors = {part: PART_COLORS.get(part, PALETTE[i % len(PALETTE)]) for i, part in enumerate(parts)}

    def draw(figure: Figure) -> None:
        axes = figure.add_subplot()
        for y, (_, shares) in enumerate(rows):
            left = 0.0
            for part in parts:
                share = float(shares.get(part) or 0.0)
                axes.barh(y, share, left=left, color=colors[part], label=part if y == 0 else None)
                if share >= 6:
                    axes.text(left + share / 2, y, f"{share:.1f}%", ha="center", va="center", fontsize=7)
                left += share
        axes.set_yticks(range(len(rows)), [text(choice, label) for label, _ in rows])
        axes.invert_yaxis()
        axes.set_xlim(0, 100)
        axes.set_xlabel(text(choice, xlabel))
        axes.legend(fontsize="small", ncols=len(parts), loc="lower right")

    return render(choice, 7, 1.2 + 0.4 * len(rows), draw)


def quadrant(choice: FontChoice, points: Sequence[tuple[Label, float, float]], split: tuple[float, float],
             xlabel: Label, ylabel: Label) -> bytes:
    """Named points on two 0-100 axes, with dashed lines where the quadrants split."""

    def draw(figure: Figure) -> None:
        axes = figure.add_subplot()
        for i, (label, x, y) in enumerate(points):
            axes.scatter([x], [y], color=PALETTE[i % len(PALETTE)], s=40)
            axes.annotate(text(choice, label), (x, y), fontsize=7, textcoords="offset points", xytext=(4, 4))
        axes.axvline(split[0], color="#5f6368", lw=0.8, ls="--")
        axes.axhline(split[1], color="#5f6368", lw=0.8, ls="--")
        xs = [p[1] for p in points] + [split[0]]
        ys = [p[2] for p in points] + [split[1]]
        axes.set_xlim(max(0, min(xs) - 8), min(100, max(xs) + 8))
        axes.set_ylim(max(0, min(ys) - 8), min(100, max(ys) + 8))
        axes.set_xlabel(text(choice, xlabel), fontsize=8, wrap=True)
        axes.set_ylabel(text(choice, ylabel), fontsize=8, wrap=True)
        axes.grid(alpha=0.3)

    return render(choice, 6.5, 5.5, draw)
