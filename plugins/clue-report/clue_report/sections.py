"""The report sections plugins add (``clue_report_sections``): found, built and rendered here.

The report knows no section by name. For each registered
:class:`~clue_core.plugin.ReportSectionSpec`, in ``order`` then name order, it hands the files
named in the spec's ``inputs`` that it found among its paths (:func:`clue_report.collect.collect`)
to ``build(files, report)``; a section with inputs but none of its files found is left out (its
``empty`` value, when it has one, still goes into report.json under its key), one with no inputs
is always built. The data goes into ``report.json`` under the spec's
``data_key``, its warnings to the top of the page, and ``html(data, kit)`` /
``markdown(data, kit)`` render it into a ``<section id=name>`` with a nav link and a
``## title`` in report.md. A ``ClueError`` a section raises is the command's one-line error;
anything else it raises is one line naming the section and its plugin (``--strict`` re-raises).
A section gets copies (of the report, of its data), so it cannot change what the report shows;
data report.json cannot hold (a set, a path, NaN), a key the report uses or a name that is one
of the page's own anchors is one line too.
"""

from __future__ import annotations

import copy
import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clue_core.plugin import ClueError, Registry, ReportSectionSpec, resolve
from clue_report.collect import plain_name
from clue_report.kit import Chart, Kit

#: report.json's own keys: a section's data_key may not replace one of them.
RESERVED = frozenset({"schema", "version", "clue_core", "bootstrap", "warnings", "groups", "tasks", "rows", "runs",
                      "unfinished", "sections", "charts", "written", "replaced", "dataclue"})
#: The page's own anchors (``index.html``): a section's ``<section id=name>`` may not repeat one of them, nor
#: take the prefix of a task's (``task-``) or a chart's (``chart-``) anchor.
ANCHORS = frozenset({"leaderboard", "tasks", "warnings", "runs", "image-check", "dataclue"})
ANCHOR_PREFIXES = ("task-", "chart-")


@dataclass
class Section:
    """One section of this report: its spec, the plugin that registered it, its input files and data."""

    spec: ReportSectionSpec
    plugin: str
    files: list[Path] = field(default_factory=list)
    data: Any = None

    def as_dict(self) -> dict[str, Any]:
        """The section's entry in ``report.json``'s ``sections`` (its data sits under ``key``)."""
        return {"name": self.spec.name, "title": self.spec.title, "key": self.spec.data_key,
                "plugin": self.plugin, "files": [str(f) for f in self.files]}


def registered(kernel: Registry | None) -> list[tuple[ReportSectionSpec, str]]:
    """``(spec, plugin)`` of every registered section, in page order."""
    specs = dict(getattr(kernel, "report_sections", None) or {}) if kernel is not None else {}
    owner = getattr(kernel, "owner", {}) or {}
    return [(spec, owner.get(("report_sections", name), "?"))
            for name, spec in sorted(specs.items(), key=lambda item: (_order(item[1]), item[0]))]


def _order(spec: ReportSectionSpec) -> float:
    """The spec's ``order``; one that is not a number sorts as the default (and is refused if the section shows):
    a plugin's typo must not stop every report."""
    order = spec.order
    ok = isinstance(order, (int, float)) and not isinstance(order, bool) and math.isfinite(order)
    return float(order) if ok else 100.0


def input_names(kernel: Registry | None) -> tuple[str, ...]:
    """Every file name some registered section reads, so the report looks for them among its paths."""
    return tuple(dict.fromkeys(name for spec, _ in registered(kernel) for name in spec.inputs if plain_name(name)))


def _call(kernel: Registry | None, section: Section, what: str, *args: Any) -> Any:
    """Call the section's ``build``/``html``/``markdown``; failures other than ClueError name the plugin."""
    ref = getattr(section.spec, what)
    try:
        function: Callable[..., Any] = resolve(ref)
        return function(*args)
    except ClueError:
        raise
    except (Exception, SystemExit) as exc:  # sys.exit() in a section is its bug, not the report's exit code
        if getattr(kernel, "strict", False):
            raise
        raise ClueError(f"report section {section.spec.name!r} (plugin {section.plugin}): {what} {ref} failed "
                        f"({type(exc).__name__}: {exc})") from exc


def build_sections(kernel: Registry | None, inputs: Sequence[Path], report: dict[str, Any]) -> list[Section]:
    """Build every section that has something to read; store each one's data in ``report`` (and its
    warnings in ``report["warnings"]``) and return them, in page order."""
    built = []
    for spec, plugin in registered(kernel):
        section = Section(spec, plugin, [path for path in inputs if path.name in spec.inputs])
        if spec.inputs and not section.files:
            if isinstance(spec.empty, tuple) and spec.data_key not in RESERVED and spec.data_key not in report:
                try:  # the key is there, nothing is shown
                    report[spec.data_key] = json.loads(json.dumps(spec.empty, allow_nan=False))
                except (TypeError, ValueError) as exc:
                    raise ClueError(f"report section {spec.name!r} (plugin {plugin}): its empty value is not "
                                    f"plain JSON ({exc})") from None
            continue
        _check_place(section, built)
        # a copy: a section reads the report's data, it cannot change what the report shows
        result = _call(kernel, section, "build", list(section.files), copy.deepcopy(report))
        if not (isinstance(result, tuple) and len(result) == 2 and isinstance(result[1], (list, tuple))):
            raise ClueError(f"report section {spec.name!r} (plugin {plugin}): build {spec.build} returned "
                            f"{type(result).__name__}, not (data, warnings)")
        section.data, warnings = result
        report["warnings"] += [str(w) for w in warnings]
        if section.data is None:
            continue
        _check_json(section)
        report[spec.data_key] = section.data
        built.append(section)
    report["sections"] = [section.as_dict() for section in built]
    return built


def _check_place(section: Section, built: Sequence[Section]) -> None:
    """The section's key in report.json and its anchor on the page must be free."""
    spec, where = section.spec, f"report section {section.spec.name!r} (plugin {section.plugin})"
    for field_name, wanted, good in (("key", "text", isinstance(spec.key, str)),
                                     ("title", "text", isinstance(spec.title, str)),
                                     ("order", "a number", _order(spec) == spec.order)):
        if not good:
            raise ClueError(f"{where}: {field_name} must be {wanted}, got {getattr(spec, field_name)!r}")
    if spec.data_key in RESERVED or any(spec.data_key == other.spec.data_key for other in built):
        raise ClueError(f"{where}: key {spec.data_key!r} is taken in report.json")
    if spec.name in ANCHORS or spec.name.startswith(ANCHOR_PREFIXES):
        raise ClueError(f"{where}: its name is an anchor the page itself uses ({spec.name!r}); "
                        f"the section needs a name of its own")


def _check_json(section: Section) -> None:
    """Refuse, with the reason, data report.json cannot hold: only objects, lists, text, finite numbers,
    true/false/null (a set, a path, NaN would fail the write at the end, or write a file no JSON reader takes)."""
    try:
        json.dumps(section.data, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as exc:
        reason = re.sub(r"\s+", " ", str(exc))
        raise ClueError(f"report section {section.spec.name!r} (plugin {section.plugin}): build "
                        f"{section.spec.build} returned data report.json cannot hold ({reason})") from None


def render_html(kernel: Registry | None, sections: Sequence[Section], font: Any, charts: list[Chart]
                ) -> list[tuple[str, str, str]]:
    """``(name, title, body)`` per section; the charts the sections draw are appended to ``charts``."""
    rendered = []
    for section in sections:
        body = _call(kernel, section, "html", copy.deepcopy(section.data), Kit(section.spec.name, font, charts))
        if not isinstance(body, str):
            raise ClueError(f"report section {section.spec.name!r} (plugin {section.plugin}): html "
                            f"{section.spec.html} returned {type(body).__name__}, not str")
        rendered.append((section.spec.name, section.spec.title, body))
    return rendered


def render_markdown(kernel: Registry | None, sections: Sequence[Section]) -> list[tuple[str, list[str]]]:
    """``(title, lines)`` per section that renders Markdown (no charts: report.md has none)."""
    rendered = []
    for section in sections:
        if not section.spec.markdown:
            continue
        lines = _call(kernel, section, "markdown", copy.deepcopy(section.data), Kit(section.spec.name, None, []))
        if not isinstance(lines, list) or not all(isinstance(line, str) for line in lines):
            raise ClueError(f"report section {section.spec.name!r} (plugin {section.plugin}): markdown "
                            f"{section.spec.markdown} returned {type(lines).__name__}, not a list of lines")
        rendered.append((section.spec.title, lines))
    return rendered


def summary_lines(sections: Sequence[Mapping[str, Any]]) -> list[str]:
    """The terminal's line per section with input files: ``comparisons: a/comparison.json, …``."""
    return [f"{s['key']}: {', '.join(s['files'])}" for s in sections if s["files"]]
