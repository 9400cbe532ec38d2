"""The kit a report section renders with: the report's tables, numbers, figures and charts.

A plugin's :class:`~clue_core.plugin.ReportSectionSpec` names ``html(data, kit) -> str`` and
``markdown(data, kit) -> list[str]``; the report calls them with a :class:`Kit`, so a section
looks like the rest of the page and never imports matplotlib, numpy or ``clue_report``.

The contract (also in ``plugins/clue-report/README.md``):

* Text: ``kit.escape(text)`` HTML-escapes anything; every other helper takes HTML cells, so
  escape what came from a file first.
* Numbers: ``kit.number(value, digits=2)`` is ``"—"`` for ``None`` and a fixed-point number
  otherwise (the page's and report.md's style); ``kit.num(value, detail="", title="")`` is a
  right-aligned ``<td>`` with an optional line under the number and a tooltip.
* Tables: ``kit.table(headers, rows, row_classes=())`` is an HTML table (cells are HTML; a
  cell that begins with ``<td`` is used as is); ``kit.md_table(headers, rows)`` is the same
  as GitHub Markdown (cells are text, escaped with ``kit.md_text``: ``<``, ``>``, ``&`` as
  entities, ``|``, backticks, ``*``, brackets with a backslash). ``kit.md_text(text)`` escapes
  text a section writes in its own Markdown lines (a title from a file).
* Charts take plain data and return the ``<figure>`` to put in the page, or ``""`` when the
  report draws no charts (``--no-charts`` in the API, or nothing to draw). A :data:`Label` is
  a text or a ``(text, english)`` pair: without a CJK font the English name is drawn (and a
  ``?`` per glyph the font lacks when there is none), never a box. ``id`` names the chart
  (the page anchor is ``chart-<id>``) and must be unique in the report; ``title`` is the
  caption; an id other than letters, digits, ``-`` and ``_`` is refused. The drawers:

  - ``kit.grouped_bars(id, title, groups, series, ylabel=, ylim=, height=)``: for each group
    (a dimension) one bar per series ``(label, values)`` (a model's score per group);
  - ``kit.stacked_bars(id, title, rows, parts=("win", "tie", "loss"), xlabel=)``: one bar per
    row ``(label, {part: percent})``, its parts stacked from 0 to 100 (win green, tie grey,
    loss red);
  - ``kit.quadrant(id, title, points, split, xlabel, ylabel)``: points ``(label, x, y)`` on
    0-100 axes with dashed lines at ``split = (x, y)``.

  ``kit.figure(id, title, png)`` embeds a PNG the section made itself.
* ``kit.drawing`` says whether charts are drawn; ``kit.cjk`` whether Chinese can be drawn.

Every chart drawn is listed in ``report.json`` (``charts.images``) under the section's name.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from html import escape as _escape
from typing import TYPE_CHECKING, Any

from clue_core.plugin import ClueError, printable
from clue_report import format as fmt
from clue_report.fonts import Label  # re-exported: sections name a chart's texts ``kit.Label``

if TYPE_CHECKING:
    from clue_report.fonts import FontChoice


@dataclass(frozen=True)
class Chart:
    """One embedded image: its id (the page's anchor), title, the section it belongs to, and PNG bytes."""

    id: str
    title: str
    section: str
    png: bytes


def escape(text: Any) -> str:
    """``text`` (anything, as ``str``) safe inside HTML text and attributes, a control character shown
    as its escape as the terminal shows it (``\\x1b``; a bidi override ``\\u202e`` reordered the rest of
    its cell, ESC and BEL are not HTML at all); tabs, newlines and carriage returns stay blanks."""
    return _HTML_CONTROL.sub(_control, _escape(str(text)))


#: :func:`clue_core.plugin.printable`'s set less the blanks HTML renders as spaces.
_HTML_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _control(match: re.Match[str]) -> str:
    return printable(match.group())


def table(headers: Sequence[str], rows: Iterable[Sequence[str]], row_classes: Sequence[str] = ()) -> str:
    """An HTML table; cells are HTML already (escape text with :func:`escape` first)."""
    head = "".join(f"<th>{h}</th>" for h in headers)
    body = []
    for i, row in enumerate(rows):
        css = f' class="{row_classes[i]}"' if i < len(row_classes) and row_classes[i] else ""
        body.append(f"<tr{css}>" + "".join(cell if cell.startswith("<td") else f"<td>{cell}</td>" for cell in row)
                    + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def num(value: Any, detail: str = "", title: str = "") -> str:
    """A right-aligned number cell, with ``detail`` (an interval) below it and ``title`` as its tooltip."""
    tip = f' title="{escape(title)}"' if title else ""
    small = f"<small>{escape(detail)}</small>" if detail else ""
    return f'<td class="num"{tip}>{fmt.number(value)}{small}</td>'


def figure(chart: Chart) -> str:
    """The chart as a ``<figure>`` whose image is a ``data:`` URI: the page fetches nothing."""
    data = base64.b64encode(chart.png).decode("ascii")
    return (f'<figure id="{chart.id}"><img src="data:image/png;base64,{data}" alt="{escape(chart.title)}">'
            f"<figcaption>{escape(chart.title)}</figcaption></figure>")


class Markdown(str):
    """Text that is Markdown already (the report's own ``**bold**``, numbers with ``[low, high]``):
    :func:`md_table` puts it in as it is, where it escapes every other cell; build it from
    :func:`md_text` pieces (which escape ``|``) and the report's own text, never raw names."""


#: What :func:`md_text` escapes. ``<``, ``>`` and ``&`` as HTML entities, so no renderer makes HTML of a
#: name (GitHub, like most, renders inline HTML); the others with a backslash, so a name makes no code
#: span, emphasis or link. ``_`` is left alone: GitHub never reads it as emphasis inside a word
#: (``test_public``), and a name like ``_x_`` is at worst shown in italics.
_MD_ESCAPES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", "\\": "\\\\", "`": "\\`", "*": "\\*", "[": "\\[",
               "]": "\\]", "|": "\\|", "\n": " ", "\r": " ", "\t": " "}


def md_text(text: Any) -> str:
    """``text`` (anything, as ``str``) shown as itself in Markdown: a model named
    ``<img src=x onerror=alert(1)>`` stays text in every renderer, a ``|`` does not split a table cell."""
    return printable("".join(_MD_ESCAPES.get(c, c) for c in str(text)))  # cat report.md ran a name's ESC


def _md_cell(text: Any) -> str:
    if isinstance(text, Markdown):
        return str(text).replace("\n", " ")
    return md_text(text)


def md_table(headers: Sequence[Any], rows: Iterable[Sequence[Any]]) -> str:
    """A GitHub-flavoured Markdown table of text cells, each escaped with :func:`md_text` (a
    :class:`Markdown` cell is put in as it is)."""
    lines = ["| " + " | ".join(map(_md_cell, headers)) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(map(_md_cell, row)) + " |" for row in rows]
    return "\n".join(lines)


class Kit:
    """What one section renders with; the charts it draws join the report's (see the module docstring).

    ``font`` is the report's font choice, or ``None`` when the report draws no charts;
    ``charts`` is the report's list of drawn charts, shared by every section.
    """

    def __init__(self, section: str, font: FontChoice | None, charts: list[Chart]) -> None:
        self.section = section
        self._font = font
        self._charts = charts

    escape = staticmethod(escape)
    table = staticmethod(table)
    num = staticmethod(num)
    md_table = staticmethod(md_table)
    md_text = staticmethod(md_text)

    @staticmethod
    def number(value: Any, digits: int = 2) -> str:
        """``"—"`` for ``None``, else ``value`` with ``digits`` decimals."""
        return fmt.number(value, digits)

    @property
    def drawing(self) -> bool:
        """Whether chart methods draw (False: they return ``""``)."""
        return self._font is not None

    @property
    def cjk(self) -> bool:
        """Whether the chart font draws Chinese (False: Labels fall back to their English names)."""
        return self._font is not None and self._font.cjk

    def _check_id(self, id: Any) -> None:
        """A chart id is part of an HTML id (``chart-<id>``): refused unless letters, digits, ``-``, ``_``,
        whether or not this report draws charts (a section must not fail only when they are drawn)."""
        if not isinstance(id, str) or not id or not id.replace("-", "").replace("_", "").isalnum():
            raise ClueError(f"report section {self.section}: chart id must be letters, digits, '-' or '_' "
                            f"(the page anchor chart-<id>), got {id!r}")

    def figure(self, id: str, title: str, png: bytes) -> str:
        """Embed a PNG the section drew itself; ``""`` when the report draws no charts."""
        self._check_id(id)
        if not self.drawing:
            return ""
        chart_id = f"chart-{id}"
        if any(chart.id == chart_id for chart in self._charts):
            raise ClueError(f"report section {self.section}: two charts are named {id!r}")
        chart = Chart(chart_id, title, self.section, png)
        self._charts.append(chart)
        return figure(chart)

    def grouped_bars(self, id: str, title: str, groups: Sequence[Label],
                     series: Sequence[tuple[Label, Sequence[float | None]]], *, ylabel: str = "score (0-100)",
                     ylim: tuple[float, float] = (0, 100), height: float = 3.8) -> str:
        """For each group one bar per series ``(label, values)``, ``values`` aligned with ``groups``."""
        self._check_id(id)
        if not self.drawing or not groups or not series:
            return ""
        from clue_report import drawers

        return self.figure(id, title, drawers.grouped_bars(self._font, groups, series, ylabel, ylim, height))

    def stacked_bars(self, id: str, title: str, rows: Sequence[tuple[Label, Mapping[str, float]]], *,
                     parts: Sequence[str] = ("win", "tie", "loss"), xlabel: Label = "% of questions") -> str:
        """One bar per row ``(label, {part: percent})``, the parts stacked from 0 to 100."""
        self._check_id(id)
        if not self.drawing or not rows:
            return ""
        from clue_report import drawers

        return self.figure(id, title, drawers.stacked_bars(self._font, rows, parts, xlabel))

    def quadrant(self, id: str, title: str, points: Sequence[tuple[Label, float, float]], *,
                 split: tuple[float, float], xlabel: Label, ylabel: Label) -> str:
        """Points ``(label, x, y)`` on 0-100 axes, split into quadrants at ``split``."""
        self._check_id(id)
        if not self.drawing or not points:
            return ""
        from clue_report import drawers

        return self.figure(id, title, drawers.quadrant(self._font, points, split, xlabel, ylabel))
