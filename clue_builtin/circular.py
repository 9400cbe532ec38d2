"""Circular evaluation's scores: right under every order of the choices, and how often each position is picked.

A model that answers a multiple-choice question with its choices reordered records, in
``prediction.raw["circular"]``, the orders it was asked in (``orders``: the original index of
the choice shown at each position, the original order first) and the original index it
picked under each (``picks``, ``None`` for no answer). Any learner may record them; the LLM
models do with ``--set circular=all`` (or ``=N``) and name this metric in their
``extra_metrics``. From them, as OpenCompass's CircularEval defines it:

* ``circular_accuracy``: the share of questions answered right under *every* order (its
  "perf_circular"), ×100. The original order counts by the run's prediction (after the task's
  decode step, as plain accuracy does), so circular accuracy is never above plain accuracy;
* ``pick_rate_<letter>``: over every answer given (each order of each question), the share that
  chose the choice shown at that position, ×100 (``pick_rate_none``: answers that named no
  choice, present only when there are some); together they sum to 100. A model without
  position bias on rotations of 4-choice questions picks each position a quarter of the time.
  A question of more than 26 choices (positions past ``Z`` have no letter) counts in circular
  accuracy but not in the pick rates: its answers past ``Z`` would otherwise read as ``none``;
* ``circular_questions``: the questions scored this way (labelled, reordered).

Pure Python; a question without ``raw["circular"]`` (not reordered) is left out of all three.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from clue_core.plugin import Example, MetricResult, Prediction, gold_of

#: The positions' names (the letters the LLM prompts list choices with); pick rates only for positions some
#: question has (every total's name: ``clue_builtin.hooks.PRODUCES``).
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _record(prediction: Prediction | None, n_choices: int) -> tuple[list[list[int]], list[int | None]] | None:
    """The prediction's orders and picks, or None where it holds none (or none that fits the question)."""
    raw = prediction.raw if prediction is not None else None
    record = raw.get("circular") if isinstance(raw, Mapping) else None
    if not isinstance(record, Mapping):
        return None
    orders, picks = record.get("orders"), record.get("picks")
    if not (isinstance(orders, list) and isinstance(picks, list) and len(orders) == len(picks) and orders):
        return None
    for order in orders:
        if not (isinstance(order, list) and sorted(order) == list(range(n_choices))):
            return None
    return orders, [pick if isinstance(pick, int) and not isinstance(pick, bool) else None for pick in picks]


def compute(examples: Sequence[Example], predictions: Sequence[Prediction | None]) -> MetricResult:
    """Circular accuracy, per-position pick rates and the count of questions, from each prediction's record."""
    per_example: list[float | None] = []
    right = questions = 0
    positions: dict[str, int] = {}
    answers = 0
    for example, prediction in zip(examples, predictions):
        gold = gold_of(example)
        choices = getattr(example, "choices", None)
        found = _record(prediction, len(choices)) if gold is not None and choices is not None else None
        if found is None:
            per_example.append(None)
            continue
        orders, picks = found
        picks = [prediction.value if prediction is not None else None, *picks[1:]]  # the original: the run's answer
        questions += 1
        hit = all(pick == gold for pick in picks)
        right += hit
        per_example.append(100.0 * hit)
        if len(choices) > len(LETTERS):  # positions past Z have no name: counted right or wrong, not in the rates
            continue
        for order, pick in zip(orders, picks):
            answers += 1
            where = order.index(pick) if isinstance(pick, int) and pick in order else None
            name = "none" if where is None else LETTERS[where]
            positions[name] = positions.get(name, 0) + 1
    if not questions:
        return MetricResult({})
    totals: dict[str, float] = {"circular_accuracy": 100.0 * right / questions,
                                "circular_questions": float(questions)}
    for name in sorted(positions, key=lambda n: (n == "none", n)):
        totals[f"pick_rate_{name}"] = 100.0 * positions[name] / answers  # answers > 0 wherever a name was counted
    return MetricResult(totals, {"circular_accuracy": per_example})


def summary(totals: Mapping[str, Any]) -> str | None:
    """``circular 40.0 (20 questions); picks A 31.0 · B 24.0 · C 25.0 · D 20.0``: a run's circular totals in one
    line (the report's), or None for a run without them."""
    if "circular_accuracy" not in totals:
        return None
    rates = " · ".join(f"{key.removeprefix('pick_rate_')} {float(value):.1f}" for key, value in totals.items()
                       if key.startswith("pick_rate_"))
    count = totals.get("circular_questions")
    counted = f" ({int(count)} questions)" if isinstance(count, (int, float)) else ""
    return f"circular {float(totals['circular_accuracy']):.1f}{counted}; picks {rates}"
