"""Pairwise judging against a reference model's run: its answers, and the verdict rule.

``--set reference_run=DIR`` names the reference model's run: an output folder holding
``superclue/predictions/dev.jsonl`` or the superclue task folder itself (holding
``predictions/dev.jsonl``). Every question whose id is in both runs is judged twice, with
the model's answer first (as A) and then second (as B), so that a judge's preference for a
position cannot decide: the model **wins** only when both orders prefer it, **loses** only
when both prefer the reference, and anything else (a verdict that flips with position, or a
tie in either order) is a **tie**. An order whose verdict does not parse even after the
repair prompt leaves the question unjudged pairwise (verdict null), never guessed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clue_core.plugin import ClueError, InputError, iter_jsonl

TASK = "superclue"
PREDICTIONS = Path("predictions") / "dev.jsonl"


@dataclass(frozen=True, slots=True)
class ReferenceAnswer:
    """The reference model's answer to one question: its last answer and every turn's record."""

    prediction: Any
    raw: Any


def reference_file(run: str | Path) -> Path:
    """``<run>/superclue/predictions/dev.jsonl`` or ``<run>/predictions/dev.jsonl``."""
    folder = Path(run).expanduser()
    for candidate in (folder / TASK / PREDICTIONS, folder / PREDICTIONS):
        if candidate.is_file():
            return candidate
    raise ClueError(f"setting 'reference_run': {folder} holds no superclue predictions (looked for "
                    f"{folder / TASK / PREDICTIONS} and {folder / PREDICTIONS})")


def read_reference(run: str | Path) -> dict[str, ReferenceAnswer]:
    """The reference run's answers by question id (as a string)."""
    path = reference_file(run)
    answers: dict[str, ReferenceAnswer] = {}
    for line, record in iter_jsonl(path):
        if "id" not in record:
            raise InputError(path, "missing", line=line, field="id")
        if "prediction" not in record:
            raise InputError(path, "missing", line=line, field="prediction")
        answers[str(record["id"])] = ReferenceAnswer(record["prediction"], record.get("raw"))
    return answers


def winner(letter: str | None, model_first: bool) -> str | None:
    """An order's winner as ``"model"``, ``"reference"``, ``"tie"`` (None: unparseable)."""
    if letter is None:
        return None
    if letter == "平局":
        return "tie"
    model_letter = "A" if model_first else "B"
    return "model" if letter == model_letter else "reference"


def verdict(orders: list[Mapping[str, Any]]) -> str | None:
    """``"win"``, ``"tie"``, ``"loss"`` from both orders' winners (see the module docstring)."""
    winners = [order.get("winner") for order in orders]
    if len(winners) != 2 or None in winners:
        return None
    if winners == ["model", "model"]:
        return "win"
    if winners == ["reference", "reference"]:
        return "loss"
    return "tie"
