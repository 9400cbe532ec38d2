"""The superclue totals, computed from the per-question scoring records alone: the one aggregation.

Every number in ``metrics.json`` comes from the ``scoring`` records written beside each
prediction, so anyone can recompute them from ``predictions/dev.jsonl``, and ``clue-core
compare`` does, through :func:`scores`, the same function the metric uses (so a comparison's
totals are the runs' own, never a second reading of the method):

* a question's score is ``points × 10`` (0–100); questions whose points are null
  (unjudged) are left out of every mean and counted in ``unjudged``;
* ``dimension:<name>`` is the mean score of the dimension's judged questions;
* ``category:<name>`` is the mean of its dimensions' scores (each dimension weighs the same);
* ``score`` is the mean score of all judged questions;
* ``ifeval_prompt_strict`` / ``ifeval_prompt_loose``: the share of constraint questions whose
  every constraint passes; ``ifeval_instruction_strict`` / ``_loose``: the share of single
  constraints that pass (IFEval's prompt- and instruction-level accuracies), 0–100;
* ``tool_call_accuracy``: the share of tool-use questions whose expected call was made;
* ``pairwise_win`` / ``pairwise_tie`` / ``pairwise_loss``: shares of the pairwise-judged
  questions (0–100); ``pairwise_judged``, ``pairwise_unjudged`` and ``pairwise_missing`` (no
  reference answer for the id) count questions;
* counts: ``questions``, ``judged``, ``unjudged``, ``repair_asked`` (judgments, single or
  pairwise, for which the repair prompt was asked; each judge's, in a panel) and ``repaired``
  (those that parsed after it);
* agreement (:func:`agreement`, formulas in :mod:`clue_tasks_superclue.agreement`):
  ``position_consistency`` (0-100), the share of pairwise judgments whose winner survives
  swapping the answers, and for a panel ``judge_alpha`` (Krippendorff's α, interval, on the
  judges' 1-10 grades) and ``judge_kappa`` (Fleiss' κ on their grade bands); each left out,
  with a note, where it is undefined.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from clue_tasks_superclue import agreement as coefficients
from clue_tasks_superclue import win_tie_loss
from clue_tasks_superclue.panel import BANDS


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values)


def _percent(part: int, whole: int) -> float:
    return 100.0 * part / whole


def question_score(detail: Mapping[str, Any]) -> float | None:
    points = detail.get("points")
    return None if points is None else float(points) * 10.0


@dataclass(frozen=True, slots=True)
class Scores:
    """One run's scores on 0-100: ``total`` (None when nothing was judged), per dimension and per
    category (each in the order its first judged question came), and how many questions were judged."""

    total: float | None
    dimensions: dict[str, float]
    categories: dict[str, float]
    questions: int
    judged: int


def scores(questions: Iterable[tuple[str, str, float | None]]) -> Scores:
    """The scoring method over ``(dimension, category, points)`` per question (points 0-10 or None)."""
    rows = [(dimension, category, None if points is None else float(points) * 10.0)
            for dimension, category, points in questions]
    judged = [(dimension, category, score) for dimension, category, score in rows if score is not None]
    by_dimension: dict[str, list[float]] = {}
    category_of: dict[str, str] = {}
    for dimension, category, score in judged:
        by_dimension.setdefault(dimension, []).append(score)
        category_of[dimension] = category
    dimensions = {name: _mean(values) for name, values in by_dimension.items()}
    by_category: dict[str, list[float]] = {}
    for name, value in dimensions.items():
        by_category.setdefault(category_of[name], []).append(value)
    return Scores(total=_mean([s for _, _, s in judged]) if judged else None, dimensions=dimensions,
                  categories={name: _mean(values) for name, values in by_category.items()},
                  questions=len(rows), judged=len(judged))


def totals(details: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """Every total named in the module docstring, from the per-question records."""
    found = scores((d["dimension"], d["category"], d.get("points")) for d in details)
    out: dict[str, float] = {}
    if found.total is not None:
        out["score"] = found.total
    out.update({f"dimension:{name}": value for name, value in found.dimensions.items()})
    out.update({f"category:{name}": value for name, value in found.categories.items()})
    out["questions"] = float(found.questions)
    out["judged"] = float(found.judged)
    out["unjudged"] = float(found.questions - found.judged)
    out.update(_instruction_totals(details))
    out.update(_tool_totals(details))
    out.update(_pairwise_totals(details))
    out.update(_repair_totals(details))
    out.update(agreement(details)[0])
    return out


def _instruction_totals(details: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    checked = [d["constraints"] for d in details if d.get("method") == "constraints" and d.get("constraints")]
    if not checked:
        return {}
    singles = [c for record in checked for c in record["checks"]]
    return {
        "ifeval_prompt_strict": _percent(sum(r["strict"] for r in checked), len(checked)),
        "ifeval_prompt_loose": _percent(sum(r["loose"] for r in checked), len(checked)),
        "ifeval_instruction_strict": _percent(sum(c["strict"] for c in singles), len(singles)),
        "ifeval_instruction_loose": _percent(sum(c["loose"] for c in singles), len(singles)),
    }


def _tool_totals(details: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    checked = [d["tool_call"] for d in details if d.get("method") == "tool_call" and d.get("tool_call")]
    if not checked:
        return {}
    return {"tool_call_accuracy": _percent(sum(c["correct"] for c in checked), len(checked))}


def _pairwise_totals(details: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    with_pairs = [d for d in details if "pairwise" in d]
    if not with_pairs:
        return {}
    pairs = [d["pairwise"] for d in with_pairs if d["pairwise"].get("orders")]
    verdicts = [p["verdict"] for p in pairs if p.get("verdict") is not None]
    out = {"pairwise_judged": float(len(verdicts)), "pairwise_unjudged": float(len(pairs) - len(verdicts)),
           "pairwise_missing": float(len(with_pairs) - len(pairs))}
    if verdicts:
        shares = win_tie_loss.shares(win_tie_loss.count(verdicts))
        out.update({f"pairwise_{name}": share for name, share in shares.items()})
    return out


def _repair_totals(details: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    judgments: list[Mapping[str, Any]] = []
    for detail in details:
        if isinstance(detail.get("judge"), Mapping) and "repaired" in detail["judge"]:
            judgments.append(detail["judge"])
        judgments += [j for j in detail.get("judges") or () if "repaired" in j]  # a panel's, judge by judge
        for order in (detail.get("pairwise") or {}).get("orders") or ():
            judgments.append(order)
    asked = [j for j in judgments if j.get("repaired")]
    return {"repair_asked": float(len(asked)), "repaired": float(sum(1 for j in asked if j.get("parsed")))}


def agreement(details: Sequence[Mapping[str, Any]]) -> tuple[dict[str, float], list[str]]:
    """The agreement totals named in the module docstring, and a note for each one left out (undefined)."""
    out: dict[str, float] = {}
    notes: list[str] = []
    pairs = list(_order_pairs(details))
    if pairs:
        share = coefficients.position_consistency(pairs)
        if share is None:
            notes.append("position_consistency left out: no pairwise judgment parsed in both orders")
        else:
            out["position_consistency"] = 100.0 * share
    panels = [d["judges"] for d in details if isinstance(d.get("judges"), list) and d["judges"]]
    if not panels:
        return out, notes
    alpha = coefficients.krippendorff_alpha([j.get("score") for j in judges] for judges in panels)
    if alpha is None:
        notes.append("judge_alpha left out: fewer than two grades per question, or every grade the same")
    else:
        out["judge_alpha"] = alpha
    complete = [[j["band"] for j in judges] for judges in panels if all(j.get("band") for j in judges)]
    kappa = coefficients.fleiss_kappa(coefficients.category_table(complete, [name for name, _ in BANDS]))
    if kappa is None:
        notes.append("judge_kappa left out: no question graded by every judge, or every band the same")
    else:
        out["judge_kappa"] = kappa
    return out, notes


def _order_pairs(details: Sequence[Mapping[str, Any]]) -> Iterable[tuple[str | None, str | None]]:
    """Each judge's two winners per question (model first, then second); a pair asked as one prompt (the two
    answers the same text) says nothing about position and is left out."""
    for detail in details:
        by_judge: dict[int, dict[bool, Mapping[str, Any]]] = {}
        for order in (detail.get("pairwise") or {}).get("orders") or ():
            by_judge.setdefault(int(order.get("judge", 0)), {})[bool(order.get("model_first"))] = order
        for orders in by_judge.values():
            if len(orders) == 2 and orders[True].get("prompt") != orders[False].get("prompt"):
                yield orders[True].get("winner"), orders[False].get("winner")
