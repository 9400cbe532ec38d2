"""``clue-core report``: dev scores of runs as a leaderboard, in the terminal or as an HTML report.

Without ``-o`` the command prints each run's primary score and the leaderboard group
averages (:func:`collect_scores`, :func:`group_averages`). With ``-o DIR`` it writes
``index.html`` (one self-contained page, charts embedded), ``report.json`` (every number
on the page) and ``report.md`` (the tables). The modules, one job each:

``collect``         find run directories, unfinished runs and comparison files
``records``         check a run's metrics.json fields before they are shown (file and field named)
``scored``          re-score a run's dev predictions per example, through the kernel
``stats``           seeded, vectorised bootstrap intervals; mean ± std over seeds
``error_analysis``  confusion, per-label F1, accuracy by context length, wrong examples
``groups``          leaderboard group averages, as the tasks declare them
``rows``            leaderboard rows and cells; ``published``: published scores side by side
``superclue``       ``comparison.json`` of open-ended runs
``build``           all of the above into report.json's data
``fonts``/``charts`` matplotlib charts (imported only here), with or without a CJK font
``html``/``markdown`` the two renderings; ``command`` what the CLI calls
``summary``         the terminal summary (no ``-o``): scores and each row's group averages
``owned``           which files in ``-o DIR`` clue-core wrote; writing the three together
"""

from __future__ import annotations

import importlib
from typing import Any

#: Where each public name lives; loaded on first use, so ``clue_core.report.superclue`` (read by
#: ``clue-core compare``) does not pull numpy in through the report's statistics.
_HOMES = {
    "collect_scores": "clue_core.report.collect",
    "group_averages": "clue_core.report.groups",
    "leaderboard_members": "clue_core.report.groups",
    "report_command": "clue_core.report.command",
    "write_report": "clue_core.report.command",
}

__all__ = ["collect_scores", "group_averages", "leaderboard_members", "report_command", "write_report"]


def __getattr__(name: str) -> Any:
    if name in _HOMES:
        return getattr(importlib.import_module(_HOMES[name]), name)
    raise AttributeError(f"module 'clue_core.report' has no attribute {name!r}")
