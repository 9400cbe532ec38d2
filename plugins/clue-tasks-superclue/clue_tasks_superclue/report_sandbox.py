"""The report's "CPIFOpen checker sandbox" section: where each superclue-cpif run's checkers ran.

A pass rate means little without the fence it was measured behind (a checker that broke out
could pass itself), so each superclue-cpif run of the report gets one row: what held when its
checkers ran (``metrics.json``'s ``sandbox_bwrap`` and ``sandbox_landlock``), what the run
asked for (the ``sandbox`` setting its manifest records) and its checker errors. The section
reads the report's own run entries (no input files of its own); a report without such a run
shows nothing.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

TASK = "superclue-cpif"


def _held(dev: Mapping[str, Any]) -> str:
    if "sandbox_bwrap" not in dev:
        return "—"  # written before the totals were, or no checker ran
    return "bubblewrap" if dev["sandbox_bwrap"] == 1 else "plain processes"


def _asked(run_dir: Path) -> str | None:
    """The run's ``sandbox`` setting as its manifest records it (None where unreadable)."""
    try:
        settings = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8")).get("settings") or {}
    except (OSError, ValueError, AttributeError):
        return None
    value = settings.get("sandbox") if isinstance(settings, dict) else None
    return value if isinstance(value, str) else None


def build(files: Sequence[Path], report: Mapping[str, Any]) -> tuple[list[dict[str, Any]] | None, list[str]]:
    """One row per superclue-cpif run; None where the report has none."""
    rows = []
    for run in report.get("runs") or []:
        if run.get("task") != TASK:
            continue
        dev = run.get("dev") or {}
        asked = _asked(Path(str(run.get("path"))))
        landlock = dev.get("sandbox_landlock")
        rows.append({"model": str(run.get("model")), "path": str(run.get("path")), "held": _held(dev),
                     "landlock": int(landlock) if isinstance(landlock, (int, float)) and landlock > 0 else None,
                     "checker_errors": dev.get("checker_errors"), "asked": str(asked) if asked else ""})
    return rows or None, []


_HEADERS = ["model", "checkers ran in", "Landlock ABI", "checker errors", "asked (sandbox=)"]


def _cells(row: Mapping[str, Any]) -> list[Any]:
    errors = row["checker_errors"]
    return [row["model"], row["held"], "none" if row["landlock"] is None else str(row["landlock"]),
            "—" if errors is None else f"{errors:g}", row["asked"] or "—"]


def html(rows: Sequence[Mapping[str, Any]], kit: Any) -> str:
    return kit.table(_HEADERS, [[kit.escape(c) for c in _cells(row)] for row in rows])


def markdown(rows: Sequence[Mapping[str, Any]], kit: Any) -> list[str]:
    return ["", kit.md_table(_HEADERS, [_cells(row) for row in rows])]
