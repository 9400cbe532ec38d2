"""Number and setting formatting shared by the HTML page and report.md, so both read alike."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any


def number(value: Any, digits: int = 2) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def interval(data: Mapping[str, Any] | None) -> str:
    if not data or "low" not in data:
        return ""
    return f"[{data['low']:.2f}, {data['high']:.2f}]"


def spread(data: Mapping[str, Any] | None, over: str = "seeds") -> str:
    if not data:
        return ""
    return f"± {data['std']:.2f} ({data['n']} {over})"


def spread_over(cell: Mapping[str, Any]) -> str:
    """What a cell's runs differ in: ``seeds``, or a repeat family's setting (``splits``: FewCLUE's 0–4)."""
    repeat = cell.get("repeat")
    return f"{repeat['setting']}s" if repeat else "seeds"


def cell_detail(cell: Mapping[str, Any]) -> str:
    """The uncertainty under a leaderboard cell: the spread over seeds (or splits), or the run's interval."""
    metric = cell["metric"]
    return (spread((cell.get("seed_spread") or {}).get(metric), spread_over(cell))
            or interval(cell["intervals"].get(metric)))


def scored_details(cell: Mapping[str, Any]) -> list[str]:
    """``test_public 50.00 ± 3.10 (5 splits)``: the cell's primary metric on each labelled split
    besides dev, with the spread over its runs; empty for a cell without such splits."""
    metric = cell["metric"]
    lines = []
    for split, values in (cell.get("scored") or {}).items():
        if metric in values:
            detail = spread(((cell.get("scored_spread") or {}).get(split) or {}).get(metric), spread_over(cell))
            lines.append(f"{split} {number(values[metric])} {detail}".strip())
    return lines


def group_text(group: Mapping[str, Any] | None, split: bool = False) -> str:
    """A group score, ``(k/n)`` when members are missing; ``split``: say which split it is on when
    not dev (FewCLUE overall averages test_public)."""
    if not group:
        return "—"
    on = f" on {group['split']}" if split and group.get("split") else ""
    if group["complete"]:
        return f"{group['score']:.2f}{on}"
    return f"{group['score']:.2f} ({len(group['tasks'])}/{len(group['tasks']) + len(group['missing'])}){on}"


def settings(values: Mapping[str, Any], *, full: bool = False) -> str:
    """``epochs=3, learning_rate=2e-05``; a setting that differs per task as ``epochs=2…8 per task``
    (``full``: ``epochs=per task (c3 8, chid 3)``)."""
    parts = []
    for key, value in values.items():
        if not isinstance(value, Mapping):
            parts.append(f"{key}={_plain(value)}")
        elif full:
            parts.append(f"{key}=per task ({', '.join(f'{task} {_plain(v)}' for task, v in value.items())})")
        else:
            numbers = [v for v in value.values() if isinstance(v, (int, float)) and not isinstance(v, bool)]
            shown = (f"{_plain(min(numbers))}…{_plain(max(numbers))}" if len(numbers) == len(value) else "…")
            parts.append(f"{key}={shown} per task")
    return ", ".join(parts)


def _plain(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def usage(row: Mapping[str, Any]) -> str:
    """How a row's model was used: ``fine-tuned``, or ``generation, 0-shot`` for an LLM."""
    mode = row.get("mode") or "—"
    return mode if row.get("shots") is None else f"{mode}, {row['shots']}-shot"


#: Under a leaderboard cell whose runs are the configuration a sweep's summary.json chose for the task.
SWEEP_BEST = "★ sweep's best"


def cell_marks(cell: Mapping[str, Any]) -> list[str]:
    """The marks under a leaderboard cell: :data:`SWEEP_BEST` where the cell is a sweep's choice."""
    return [SWEEP_BEST] if cell.get("sweep_best") else []


def sweep_legend(report: Mapping[str, Any]) -> str:
    """What :data:`SWEEP_BEST` means, for the leaderboard's legend; ``""`` when no cell carries it."""
    if not any(cell.get("sweep_best") for row in report["rows"] for cell in row["cells"].values()):
        return ""
    return (f" {SWEEP_BEST} marks the configuration the sweep's summary.json chose for the task (the highest "
            f"mean dev score over its seeds).")
