"""clue-report: ``clue-core report``, dev scores of runs as a leaderboard, in the terminal or as an HTML report.

Without ``-o`` the command prints each run's primary score and the leaderboard group
averages (:func:`collect_scores`, :func:`group_averages`). With ``-o DIR`` it writes
``index.html`` (one self-contained page, charts embedded), ``report.json`` (every number
on the page) and ``report.md`` (the tables). Plugins add views of their own through the
kernel's ``clue_report_sections`` hook (the SuperCLUE comparison is one, in
clue-tasks-superclue), rendered with :class:`clue_report.kit.Kit`. The modules, one job each:

``hooks``           the ``report`` command's spec (cheap to import: ``clue-core list`` loads it)
``cli``             the click command; ``command`` what it calls (testable without the CLI)
``collect``         find run directories, unfinished runs and the sections' input files
``scored``          re-score a run's dev predictions per example, through the kernel
``stats``           seeded, vectorised bootstrap intervals; mean ± std over seeds
``error_analysis``  confusion, per-label F1, accuracy by context length, wrong examples
``groups``          leaderboard group averages, as the tasks declare them
``rows``            leaderboard rows and cells; ``published``: published scores side by side
``sections``        the plugins' report sections: their files, build, html and Markdown
``build``           all of the above into report.json's data
``kit``             what a section renders with: tables, numbers, figures, charts from plain data
``fonts``/``drawers``/``charts`` matplotlib charts (imported only here), with or without a CJK font
``html``/``markdown`` the two renderings
``summary``         the terminal summary (no ``-o``): scores and each row's group averages
``owned``           which files in ``-o DIR`` clue-core wrote; writing the three together
"""

from __future__ import annotations

import importlib
from typing import Any

#: Where each public name lives; loaded on first use, so importing the package (``clue_report.hooks``,
#: read by every ``clue-core list``) pulls in neither numpy nor matplotlib.
_HOMES = {
    "Kit": "clue_report.kit",
    "collect_scores": "clue_report.collect",
    "group_averages": "clue_report.groups",
    "leaderboard_members": "clue_report.groups",
    "report_command": "clue_report.command",
    "write_report": "clue_report.command",
}

__all__ = ["Kit", "collect_scores", "group_averages", "leaderboard_members", "report_command", "write_report"]


def __getattr__(name: str) -> Any:
    if name in _HOMES:
        return getattr(importlib.import_module(_HOMES[name]), name)
    raise AttributeError(f"module 'clue_report' has no attribute {name!r}")
