"""The prompt spread beside the single-prompt score: how far a rewording of the task's prompt moves it.

An LLM run with ``--set prompt_variants=all`` scored its task's primary metric under each prompt
variant (metrics.json's dev ``prompt_variant_<name>``, ``prompt_spread_mean``/``_std``/``_prompts``,
written by the built-in ``prompt_spread`` metric). This section sets, for every cell that has them,
the run's own number (the default prompt's, the leaderboard's) beside ``mean ± std over N prompts``
and each prompt's score, so a difference between two models can be read against the spread a
rewording alone causes. A report of runs without them has no such section, and reads as before.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from clue_report import format as fmt
from clue_report.kit import escape, md_table, md_text, table

PREFIX = "prompt_variant_"
NOTE = ("Each prompt is a rewording of the task's own (instruction, field labels, answer words, answer prefix: the "
        "task plugin's variants); single prompt is the run's number, under the task's default prompt; the spread is "
        "the mean ± sample standard deviation of the primary dev metric over all of them (the default included).")


def rows(report: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One entry per leaderboard cell with a prompt spread: model, task, single, mean, std, prompts, variants."""
    found = []
    for row in report.get("rows") or ():
        for task, cell in (row.get("cells") or {}).items():
            dev = cell.get("dev") or {}
            if not isinstance(dev.get("prompt_spread_mean"), (int, float)):
                continue
            variants = {key.removeprefix(PREFIX): value for key, value in dev.items()
                        if key.startswith(PREFIX) and isinstance(value, (int, float))}
            found.append({"model": row.get("label", ""), "task": task, "single": cell.get("value"),
                          "mean": dev["prompt_spread_mean"], "std": dev.get("prompt_spread_std"),
                          "prompts": int(dev.get("prompt_spread_prompts") or len(variants)), "variants": variants})
    return found


def spread_text(entry: Mapping[str, Any]) -> str:
    """``56.25 ± 1.20 over 5 prompts``."""
    return f"{fmt.number(entry['mean'])} ± {fmt.number(entry['std'])} over {entry['prompts']} prompts"


def _each(entry: Mapping[str, Any]) -> str:
    return " · ".join(f"{name} {fmt.number(value)}" for name, value in entry["variants"].items())


def markdown_lines(report: Mapping[str, Any]) -> list[str]:
    """report.md's "Prompt spread" section (nothing for a report without one)."""
    found = rows(report)
    if not found:
        return []
    table_rows = [[entry["model"], entry["task"], fmt.number(entry["single"]), spread_text(entry), _each(entry)]
                  for entry in found]
    return ["## Prompt spread", "", md_text(NOTE), "",
            md_table(["model", "task", "single prompt", "mean ± std across prompts", "each prompt"], table_rows), ""]


def html_section(report: Mapping[str, Any]) -> str:
    """index.html's "Prompt spread" section ('' for a report without one)."""
    found = rows(report)
    if not found:
        return ""
    body = table(["model", "task", "single prompt", "mean ± std across prompts", "each prompt"],
                 [[escape(entry["model"]), escape(entry["task"]), escape(fmt.number(entry["single"])),
                   escape(spread_text(entry)), escape(_each(entry))] for entry in found])
    return f"<section id='prompt-spread'><h2>Prompt spread</h2><p class='muted'>{escape(NOTE)}</p>{body}</section>"
