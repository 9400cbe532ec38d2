"""What ``clue-core report`` runs: the terminal summary, or the report files with ``-o``.

The CLI command only parses its options and echoes the text returned here, so the
whole behaviour is testable without the CLI.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from clue_core.plugin import ClueError, Registry, format_table, printable
from clue_report import stats
from clue_report.build import build_report
from clue_report.explorer import DEFAULT_EXAMPLES
from clue_report.kit import Chart
from clue_report.owned import FILES, check_replaceable, claimed, write_files
from clue_report.sections import render_html as render_sections
from clue_report.sections import render_markdown as markdown_sections
from clue_report.sections import summary_lines
from clue_report.summary import summary_text


def write_report(kernel: Registry, paths: Sequence[Path], output_dir: Path, *, font: str | None = None,
                 seed: int = stats.SEED, resamples: int = stats.RESAMPLES, charts: bool = True,
                 force: bool = False, examples: int = DEFAULT_EXAMPLES, baseline: Path | None = None) -> dict[str, Any]:
    """Write index.html, report.json and report.md into ``output_dir``; return report.json's content.

    ``font`` overrides ``$CLUE_REPORT_FONT`` (``none`` draws English labels only);
    ``charts=False`` leaves the charts out, the sections' too (matplotlib is then not imported). Files there
    that clue-core did not write are refused before any work, unless ``force``
    (:mod:`clue_report.owned`). The explorer shows up to ``examples`` dev examples per run. ``baseline`` is
    the raw-data run of the DataCLUE comparison (:mod:`clue_report.data_centric`; found by itself without it).
    """
    if output_dir.exists() and not output_dir.is_dir():
        raise ClueError(f"{output_dir} is a file, not a folder")
    with claimed(output_dir):
        return _write_report(kernel, paths, output_dir, font, seed, resamples, charts, force, examples, baseline)


def _write_report(kernel: Registry, paths: Sequence[Path], output_dir: Path, font: str | None, seed: int,
                  resamples: int, charts: bool, force: bool, examples: int, baseline: Path | None = None
                  ) -> dict[str, Any]:
    """:func:`write_report` once the folder is held: check, build, render, write."""
    from clue_report import data_centric

    replaced = check_replaceable(output_dir, force)
    if baseline is not None:
        data_centric.check_baseline(baseline)
    report, sections = build_report(kernel, paths, seed=seed, resamples=resamples, examples=examples)
    dataclue_html, dataclue_markdown = data_centric.views(kernel, report, baseline=baseline, seed=seed,
                                                          resamples=resamples)
    images: list[Chart] = []
    choice = None
    if charts:
        from clue_report.charts import draw_charts
        from clue_report.fonts import choose_font

        choice = choose_font(font)
        images = draw_charts(report, choice)
    views = dataclue_html + render_sections(kernel, sections, choice, images)  # their charts join ``images``
    report["charts"] = {"font": None if choice is None else {"family": choice.family, "file": choice.path,
                                                             "cjk": choice.cjk, "reason": choice.reason},
                        "images": [{"id": c.id, "title": c.title, "section": c.section} for c in images]}
    from clue_report.html import render_html
    from clue_report.markdown import render_markdown

    pages = {"index.html": render_html(report, images, views),
             "report.md": render_markdown(report, dataclue_markdown + markdown_sections(kernel, sections))}
    write_files(output_dir, pages, report, replaced)
    return report


def report_command(kernel: Registry, paths: Sequence[Path], output_dir: Path | None = None, as_json: bool = False,
                   force: bool = False, examples: int = DEFAULT_EXAMPLES, baseline: Path | None = None) -> str:
    """The text ``clue-core report`` prints (the files are written first when ``output_dir`` is given),
    with every control character escaped (:func:`shown`)."""
    return shown(_report_text(kernel, paths, output_dir, as_json, force, examples, baseline), as_json)


#: Control characters (printable's set) but the newline: in JSON output, only ever inside a string.
_CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def shown(text: str, as_json: bool) -> str:
    """``text`` safe for a terminal: a row label's ESC (a model's name, a sweep's grid key) reached it raw
    in the group lines; JSON gets ``\\u001b`` escapes (the same JSON), text :func:`printable`'s."""
    if as_json:
        return _CONTROL.sub(lambda match: f"\\u{ord(match.group()):04x}", text)
    return printable(text, lines=True)


def _report_text(kernel: Registry, paths: Sequence[Path], output_dir: Path | None, as_json: bool, force: bool,
                 examples: int, baseline: Path | None = None) -> str:
    if output_dir is None:
        return summary_text(kernel, paths, as_json)
    report = write_report(kernel, paths, output_dir, force=force, examples=examples, baseline=baseline)
    files = [str(output_dir / name) for name in FILES]
    if as_json:
        return json.dumps({"files": files, "warnings": report["warnings"],
                           "rows": [{"label": r["label"], "comparable": r["comparable"],
                                     "cells": {t: c["value"] for t, c in r["cells"].items()},
                                     "groups": r["groups"]} for r in report["rows"]]},
                          ensure_ascii=False, indent=2, default=str)
    group_names = list(report["groups"])
    table = [["row", *group_names, "tasks"]]
    for row in report["rows"]:
        scores = [(f"{g['score']:.2f}" + ("" if g["complete"] else f" ({len(g['tasks'])}/"
                                          f"{len(g['tasks']) + len(g['missing'])})")) if (g := row["groups"].get(n))
                  else "-" for n in group_names]
        table.append([row["label"] + ("" if row["comparable"] else " *"), *scores, str(len(row["cells"]))])
    lines = [format_table(table)] if report["rows"] else []
    if any(not r["comparable"] for r in report["rows"]):
        lines.append("* not comparable with published scores (bundled sample or --limit)")
    lines += summary_lines(report["sections"])
    if report["warnings"]:
        lines.append(f"{len(report['warnings'])} warning(s), listed at the top of the report")
    lines.append(f"wrote {', '.join(files)}")
    return "\n".join(lines)
