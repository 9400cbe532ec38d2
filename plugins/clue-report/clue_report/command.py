"""What ``clue-core report`` runs: the terminal summary, or the report files with ``-o``.

The CLI command only parses its options and echoes the text returned here, so the
whole behaviour is testable without the CLI.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from clue_core.errors import ClueError
from clue_core.report import stats
from clue_core.report.build import build_report
from clue_core.report.owned import FILES, check_replaceable, claimed, write_files
from clue_core.report.summary import summary_text
from clue_core.table import format_table


def write_report(kernel: Any, paths: Sequence[Path], output_dir: Path, *, font: str | None = None,
                 seed: int = stats.SEED, resamples: int = stats.RESAMPLES, charts: bool = True,
                 force: bool = False) -> dict[str, Any]:
    """Write index.html, report.json and report.md into ``output_dir``; return report.json's content.

    ``font`` overrides ``$CLUE_REPORT_FONT`` (``none`` draws English labels only);
    ``charts=False`` leaves the charts out (matplotlib is then not imported). Files there
    that clue-core did not write are refused before any work, unless ``force``
    (:mod:`clue_core.report.owned`).
    """
    if output_dir.exists() and not output_dir.is_dir():
        raise ClueError(f"{output_dir} is a file, not a folder")
    with claimed(output_dir):
        return _write_report(kernel, paths, output_dir, font, seed, resamples, charts, force)


def _write_report(kernel: Any, paths: Sequence[Path], output_dir: Path, font: str | None, seed: int,
                  resamples: int, charts: bool, force: bool) -> dict[str, Any]:
    """:func:`write_report` once the folder is held: check, build, render, write."""
    replaced = check_replaceable(output_dir, force)
    report = build_report(kernel, paths, seed=seed, resamples=resamples)
    images: list[Any] = []
    if charts:
        from clue_core.report.charts import draw_charts
        from clue_core.report.fonts import choose_font

        choice = choose_font(font)
        images = draw_charts(report, choice)
        report["charts"] = {"font": {"family": choice.family, "file": choice.path, "cjk": choice.cjk,
                                     "reason": choice.reason},
                            "images": [{"id": c.id, "title": c.title, "section": c.section} for c in images]}
    else:
        report["charts"] = {"font": None, "images": []}
    from clue_core.report.html import render_html
    from clue_core.report.markdown import render_markdown

    pages = {"index.html": render_html(report, images), "report.md": render_markdown(report)}
    write_files(output_dir, pages, report, replaced)
    return report


def report_command(kernel: Any, paths: Sequence[Path], output_dir: Path | None = None, as_json: bool = False,
                   force: bool = False) -> str:
    """The text ``clue-core report`` prints (the files are written first when ``output_dir`` is given)."""
    if output_dir is None:
        return summary_text(kernel, paths, as_json)
    report = write_report(kernel, paths, output_dir, force=force)
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
    if report["comparisons"]:
        lines.append(f"comparisons: {', '.join(c['path'] for c in report['comparisons'])}")
    if report["warnings"]:
        lines.append(f"{len(report['warnings'])} warning(s), listed at the top of the report")
    lines.append(f"wrote {', '.join(files)}")
    return "\n".join(lines)
