"""Win/tie/loss against a reference model: the rules, in one place, for the task and for ``compare``.

Two verdicts exist and both are decided here, so the metric's ``pairwise_*`` and the
comparison's ``vs_reference`` / ``vs_reference_pairwise`` can never drift apart:

* **from grades** (:func:`by_points`, ``compare``'s ``vs_reference``): the model wins a
  question when its points (0-10) exceed the reference's by more than the tie margin, loses
  when they fall short by more, and ties otherwise; unjudged on either side, no verdict;
* **from pairwise judging** (:func:`by_orders`, the task's ``pairwise``): the question is
  judged twice, the model's answer first (as A) and then second (as B), so that a judge's
  preference for a position cannot decide: the model wins only when both orders prefer it,
  loses only when both prefer the reference, and anything else (a verdict that flips with
  position, or a tie in either order) is a tie; an unparseable order, no verdict.

:func:`shares` turns counted verdicts into percentages, the one computation behind both the
metric's ``pairwise_win``/``_tie``/``_loss`` and the comparison's (rounded) outcomes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

VERDICTS = ("win", "tie", "loss")
#: The pairwise judge's letter for "neither answer is better".
TIE_LETTER = "平局"


def by_points(model_points: float | None, reference_points: float | None, margin: float) -> str | None:
    """The ±margin rule on the 0-10 points; None when either question is unjudged."""
    if model_points is None or reference_points is None:
        return None
    difference = model_points - reference_points
    return "win" if difference > margin else "loss" if difference < -margin else "tie"


def order_winner(letter: str | None, model_first: bool) -> str | None:
    """One order's winner as ``"model"``, ``"reference"`` or ``"tie"`` from the judge's letter (None: unparsed)."""
    if letter is None:
        return None
    if letter == TIE_LETTER:
        return "tie"
    return "model" if letter == ("A" if model_first else "B") else "reference"


def by_orders(orders: Sequence[Mapping[str, Any]]) -> str | None:
    """``"win"``, ``"tie"`` or ``"loss"`` from both orders' winners; None unless both parsed."""
    winners = [order.get("winner") for order in orders]
    if len(winners) != 2 or None in winners:
        return None
    if winners == ["model", "model"]:
        return "win"
    if winners == ["reference", "reference"]:
        return "loss"
    return "tie"


def count(verdicts: Iterable[str]) -> dict[str, int]:
    """How many of each verdict (every verdict present, possibly 0)."""
    counts = dict.fromkeys(VERDICTS, 0)
    for verdict in verdicts:
        counts[verdict] += 1
    return counts


def shares(counts: Mapping[str, int]) -> dict[str, float]:
    """Win/tie/loss as percentages of the decided questions (unrounded; ``counts`` must not all be 0)."""
    n = sum(counts[v] for v in VERDICTS)
    return {v: 100.0 * counts[v] / n for v in VERDICTS}


def outcome(counts: Mapping[str, int]) -> dict[str, float]:
    """:func:`shares` rounded to 2 decimals, with ``n`` the number of questions counted (comparison.json)."""
    return {**{v: round(share, 2) for v, share in shares(counts).items()}, "n": sum(counts[v] for v in VERDICTS)}
