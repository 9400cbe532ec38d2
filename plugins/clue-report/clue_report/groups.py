"""Leaderboard group averages, computed as the CLUE leaderboard computes them.

Which tasks form a group is declared by the tasks themselves (``TaskSpec.leaderboards``,
recorded in each run's ``metrics.json``), per benchmark version: CLUE 1.1's
classification average uses OCNLI, CLUE 1.0's uses CMNLI in its place. So a third-party
task joins a group by declaring it, and nothing here names a task.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any


def leaderboard_members(tasks: Iterable[Any]) -> dict[str, list[str]]:
    """``{"CLUE 1.1 classification": [task, …]}`` from the installed task specs."""
    members: dict[str, list[str]] = {}
    for task in tasks:
        for lb in task.leaderboards:
            members.setdefault(f"{lb.benchmark} {lb.group}", []).append(task.name)
    return members


def merge_members(declared: Mapping[str, list[str]] | None,
                  recorded: Iterable[tuple[str, Iterable[tuple[str, str]]]]) -> dict[str, list[str]]:
    """Members declared by the installed tasks plus those the runs recorded (``(task, [(benchmark, group)])``).

    A run of a task whose plugin is no longer installed still counts in the groups it
    recorded, so a report never silently drops it.
    """
    members: dict[str, list[str]] = {name: list(tasks) for name, tasks in (declared or {}).items()}
    for task, boards in recorded:
        for benchmark, group in boards:
            tasks = members.setdefault(f"{benchmark} {group}", [])
            if task not in tasks:
                tasks.append(task)
    return members


def average_groups(members: Mapping[str, list[str]], by_task: Mapping[str, float],
                   scored: Mapping[str, Mapping[str, float]] | None = None) -> dict[str, dict[str, Any]]:
    """Per group: the plain mean of the member tasks' primary scores that are present.

    ``missing`` names members without a score and ``complete`` says whether there are
    none: the leaderboard only publishes an average over all members, so an incomplete
    one must be shown as such, never as a leaderboard score.

    ``scored`` holds each task's primary score on its labelled splits besides dev
    (``{task: {"test_public": 50.0}}``). A group whose present members all have a score on
    one such split is averaged on that split, and says so (``"split"``): FewCLUE's papers and
    leaderboard report test_public, dev being for model selection, so FewCLUE overall is the
    mean of the test_public accuracies. A group with one member lacking it stays on dev (CLUE's
    tasks have no such split), so a score is never an average over two different splits.
    """
    groups: dict[str, dict[str, Any]] = {}
    for name, tasks in members.items():
        present = [t for t in tasks if t in by_task]
        if not present:
            continue
        split = common_split(present, scored or {})
        values = {t: scored[t][split] for t in present} if split and scored else by_task
        groups[name] = {"score": sum(values[t] for t in present) / len(present), "tasks": present,
                        "missing": [t for t in tasks if t not in by_task],
                        "complete": len(present) == len(tasks), **({"split": split} if split else {})}
    return groups


def common_split(tasks: Iterable[str], scored: Mapping[str, Mapping[str, float]]) -> str | None:
    """The first labelled split besides dev on which every one of ``tasks`` has a primary score."""
    tasks = list(tasks)
    if not tasks:
        return None
    candidates = [split for split in scored.get(tasks[0], {}) if all(split in scored.get(t, {}) for t in tasks)]
    return candidates[0] if candidates else None


def group_averages(scores: list[dict[str, Any]], declared: dict[str, list[str]] | None = None
                   ) -> dict[str, dict[str, Any]]:
    """Average of the primary scores per leaderboard group, over the member tasks present.

    Members are those the installed tasks declare (``declared``) plus those the runs
    themselves recorded; ``missing`` names members with no run. (The text and ``--json``
    output of ``clue-core report``; the HTML report uses :func:`average_groups` per row.)
    """
    members = merge_members(declared, ((s["task"], s["leaderboards"]) for s in scores))
    by_task = {s["task"]: s["primary"] for s in scores if s["primary"] is not None}
    scored = {s["task"]: {split: values[s["primary_metric"]] for split, values in (s.get("scored") or {}).items()
                          if values.get(s["primary_metric"]) is not None} for s in scores}
    groups = average_groups(members, by_task, scored)
    for group in groups.values():
        del group["complete"]  # the --json shape of earlier versions
    return groups
