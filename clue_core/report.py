"""Collect dev scores from run directories and average them as the CLUE leaderboard does.

Which tasks form a group is declared by the tasks themselves (``TaskSpec.leaderboards``,
recorded in each run's ``metrics.json``), per benchmark version: CLUE 1.1's
classification average uses OCNLI, CLUE 1.0's uses CMNLI in its place. So a third-party
task joins a group by declaring it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from clue_core.errors import ClueError
from clue_core.rundir import METRICS


def collect_scores(paths: list[Path]) -> list[dict[str, Any]]:
    scores = []
    for path in paths:
        files = [path / METRICS] if (path / METRICS).is_file() else sorted(path.glob(f"*/{METRICS}"))
        if not files:
            raise ClueError(f"{path}: no {METRICS} here or in its sub-folders")
        for file in files:
            try:
                metrics = json.loads(file.read_text(encoding="utf-8"))
                scores.append({"task": metrics["task"], "primary_metric": metrics["primary_metric"],
                               "primary": metrics.get("primary"), "model": metrics.get("model"),
                               "leaderboards": [(lb["benchmark"], lb["group"]) for lb in
                                                metrics.get("leaderboards", [])],
                               "run_dir": str(file.parent)})
            except (OSError, ValueError, KeyError, TypeError) as exc:
                raise ClueError(f"{file}: unreadable ({type(exc).__name__}: {exc})") from None
    return scores


def leaderboard_members(tasks: Any) -> dict[str, list[str]]:
    """``{"CLUE 1.1 classification": [task, …]}`` from the installed task specs."""
    members: dict[str, list[str]] = {}
    for task in tasks:
        for lb in task.leaderboards:
            members.setdefault(f"{lb.benchmark} {lb.group}", []).append(task.name)
    return members


def group_averages(scores: list[dict[str, Any]], declared: dict[str, list[str]] | None = None
                   ) -> dict[str, dict[str, Any]]:
    """Average of the primary scores per leaderboard group, over the member tasks present.

    Members are those the installed tasks declare (``declared``) plus those the runs
    themselves recorded; ``missing`` names members with no run.
    """
    members: dict[str, list[str]] = {name: list(tasks) for name, tasks in (declared or {}).items()}
    for s in scores:
        for benchmark, group in s["leaderboards"]:
            tasks = members.setdefault(f"{benchmark} {group}", [])
            if s["task"] not in tasks:
                tasks.append(s["task"])
    by_task = {s["task"]: s["primary"] for s in scores if s["primary"] is not None}
    groups = {}
    for name, tasks in members.items():
        present = [t for t in tasks if t in by_task]
        if present:
            groups[name] = {"score": sum(by_task[t] for t in present) / len(present), "tasks": present,
                            "missing": [t for t in tasks if t not in by_task]}
    return groups
