"""A panel of judges: several models grade every answer, and one rule makes their grades one.

``--set judge=a,b,c`` names a panel (the kernel gives the i-th judge the settings under
``judge.<i>.``, see docs/superclue.md "Judge panels"); one name is a single judge, scored
exactly as before panels existed. Every judge is asked every judgment (each from its own
cache), and per question:

* each judge's grade is kept in ``scoring.judges`` (``model``, ``score``, ``band``, ``reasons``
  and the judgment's output and repair), so compare and the report can use them;
* ``scoring.judge`` holds the panel's grade under ``judge_aggregate`` over the judges whose
  judgment parsed (none parsed: unjudged, as for a single judge):

  - ``mean`` (default): the mean grade;
  - ``median``: the median grade (the mean of the middle two for an even number);
  - ``majority``: the band most judges put the answer in (:data:`BANDS`), ties going to the
    **lower** band (a split panel never lifts an answer), graded with the mean grade of the
    judges in that band.

Pairwise, each judge gives its own verdict from both orders (:func:`win_tie_loss.by_orders`),
and the panel's verdict is, with ``win`` = +1, ``tie`` = 0, ``loss`` = −1, the sign of their
mean (``mean``) or median (``median``), or the most common verdict, ties between verdicts
being a tie (``majority``).
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from clue_tasks_superclue import win_tie_loss
from clue_tasks_superclue.compare.comparison_file import GRADES

SETTING = "judge"
AGGREGATES = ("mean", "median", "majority")
#: SuperCLUE's four grade bands (the judge-agreement sheet's, best first) on the judge's 1–10 grade:
#: the lowest grade of each. 60 % is the pass mark of Chinese grading (及格), 90 % 优秀, 70 % 良好.
BANDS: tuple[tuple[str, float], ...] = tuple(zip(GRADES, (9.0, 7.0, 6.0, float("-inf"))))
_SIGN = {"win": 1, "tie": 0, "loss": -1}


def judge_names(value: Any) -> list[str]:
    """The judges ``judge`` names, split as the kernel splits a ``names_model`` value (commas, trimmed)."""
    text = str(value or "").strip()
    return [part.strip() for part in text.split(",")] if text else []


def namespaces(names: Sequence[str]) -> list[str]:
    """Each judge's settings namespace, as the kernel names it: ``judge`` alone, ``judge.<i>`` in a panel."""
    return [SETTING] if len(names) == 1 else [f"{SETTING}.{i}" for i in range(len(names))]


def band_of(points: float) -> str:
    """The band of a grade (or a panel's mean grade) on 1–10."""
    return next(name for name, floor in BANDS if points >= floor)


def aggregate(grades: Sequence[float], how: str) -> float | None:
    """The panel's grade from the grades of the judges whose judgment parsed (None: none did)."""
    if not grades:
        return None
    if how == "mean":
        return statistics.fmean(grades)
    if how == "median":
        return float(statistics.median(grades))
    if how == "majority":
        counts = Counter(band_of(g) for g in grades)
        most = max(counts.values())
        band = next(name for name, _ in reversed(BANDS) if counts.get(name) == most)  # lowest band of the tie
        return statistics.fmean(g for g in grades if band_of(g) == band)
    raise ValueError(f"judge_aggregate: expected one of {', '.join(AGGREGATES)}, got {how!r}")


def verdict(verdicts: Sequence[str | None], how: str) -> str | None:
    """The panel's pairwise verdict from each judge's (None where a judge's orders did not both parse)."""
    decided = [_SIGN[v] for v in verdicts if v is not None]
    if not decided:
        return None
    if how == "majority":
        counts = Counter(decided)
        most = max(counts.values())
        leaders = [sign for sign, count in counts.items() if count == most]
        sign = leaders[0] if len(leaders) == 1 else 0
    else:
        centre = statistics.fmean(decided) if how == "mean" else statistics.median(decided)
        sign = (centre > 0) - (centre < 0)
    return {1: "win", 0: "tie", -1: "loss"}[sign]


def grade_record(names: Sequence[str], judgments: Sequence[Any], how: str
                 ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """``scoring.judge`` (the panel's grade) and ``scoring.judges`` (each judge's) for one question.

    ``judgments`` holds each judge's :class:`~clue_tasks_superclue.judge.Judgment` (None: not asked).
    """
    judges = []
    for index, (name, judgment) in enumerate(zip(names, judgments)):
        if judgment is None:
            judges.append({"judge": index, "model": name, "score": None, "band": None, "reasons": "not asked",
                           "parsed": False, "repaired": False, "output": None})
            continue
        own = judgment.as_dict("score")
        own.pop("prompt")
        score = own["score"]
        judges.append({"judge": index, "model": name, "score": score,
                       "band": None if score is None else band_of(score), **own})
    grades = [float(j["score"]) for j in judges if j["score"] is not None]
    points = aggregate(grades, how)
    prompt = next((j.prompt for j in judgments if j is not None), None)
    reasons = "\n".join(f"[judge.{j['judge']} {j['model']}] {j['reasons']}" for j in judges if j["score"] is not None)
    panel = {"grade": points, "band": None if points is None else band_of(points), "aggregate": how,
             "graded_by": len(grades), "panel": len(names), "reasons": reasons or None,
             "parsed": points is not None, "prompt": prompt}
    return panel, judges


def pairwise_record(names: Sequence[str], orders_by_judge: Sequence[Sequence[Mapping[str, Any]]], how: str
                    ) -> tuple[str | None, list[dict[str, Any]], list[dict[str, Any]]]:
    """The panel's verdict, every judge's orders (each marked with its ``judge``) and each judge's verdict."""
    orders, judges = [], []
    for index, (name, own) in enumerate(zip(names, orders_by_judge)):
        orders += [{"judge": index, **order} for order in own]
        judges.append({"judge": index, "model": name, "verdict": win_tie_loss.by_orders(own)})
    return verdict([j["verdict"] for j in judges], how), orders, judges
