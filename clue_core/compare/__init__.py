"""``clue-core compare``: SuperCLUE-style comparisons of judged runs, written as ``comparison.json``.

Modules: :mod:`runs` reads run folders strictly, :mod:`scores` holds the method (scores,
win/tie/loss, maturity), :mod:`build` assembles the document, :mod:`human` correlates with a
human ranking, :mod:`sheet` exports and reads back the judge-agreement sheet, and
:mod:`command` ties them together for the CLI.
"""

from __future__ import annotations

from clue_core.compare.command import CompareOptions, CompareResult, compare_command

__all__ = ["CompareOptions", "CompareResult", "compare_command"]
