"""Collect dev scores from run directories and average them as the CLUE leaderboard does.

Classification score = mean accuracy of AFQMC, TNEWS, IFLYTEK, OCNLI, CLUEWSC2020, CSL;
reading comprehension = mean of CMRC2018 EM, CHID accuracy, C3 accuracy (FORMATS.md).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from clue_core.errors import ClueError
from clue_core.runner import METRICS

LEADERBOARD_GROUPS = {
    "classification": ("afqmc", "tnews", "iflytek", "ocnli", "cluewsc2020", "csl"),
    "mrc": ("cmrc2018", "chid", "c3"),
}


def collect_scores(paths: list[Path]) -> list[dict[str, Any]]:
    scores = []
    for path in paths:
        files = [path / METRICS] if (path / METRICS).is_file() else sorted(path.glob(f"*/{METRICS}"))
        if not files:
            raise ClueError(f"{path}: no {METRICS} here or in its sub-folders")
        for file in files:
            try:
                metrics = json.loads(file.read_text(encoding="utf-8"))
            except (OSError, json.JSONDecodeError) as exc:
                raise ClueError(f"{file}: unreadable ({exc})") from None
            scores.append({"task": metrics["task"], "primary_metric": metrics["primary_metric"],
                           "primary": metrics.get("primary"), "model": metrics.get("model"),
                           "run_dir": str(file.parent)})
    return scores


def group_averages(scores: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Average of the primary scores per leaderboard group, over the tasks present."""
    by_task = {s["task"]: s["primary"] for s in scores if s["primary"] is not None}
    groups = {}
    for name, members in LEADERBOARD_GROUPS.items():
        present = [t for t in members if t in by_task]
        if present:
            groups[name] = {
                "score": sum(by_task[t] for t in present) / len(present),
                "tasks": present,
                "missing": [t for t in members if t not in by_task],
            }
    return groups
