"""One scoring method and one win/tie/loss rule: the task's metric and ``clue-core compare`` give the
same numbers for the same per-question records, because both call the same functions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from clue_tasks_superclue import aggregate, win_tie_loss
from clue_tasks_superclue.compare.command import CompareOptions, compare_command
from tests.compare.fixtures import write_run

#: (id, dimension, category, points, pairwise winners of the two orders or None for no pairwise record)
QUESTIONS = [
    ("c1", "计算", "理科", 8.0, ("model", "model")),
    ("c2", "计算", "理科", 7.0, ("model", "reference")),
    ("l1", "逻辑推理", "理科", 3.0, ("reference", "reference")),
    ("k1", "知识百科", "文科", 9.0, ("tie", "model")),
    ("k2", "知识百科", "文科", None, (None, "model")),
    ("s1", "安全", "文科", 10.0, ("model", "model")),
    ("h1", "精确指令遵循", "Hard", 0.0, None),
    ("m1", "我的维度", "其他", 6.0, ("reference", "tie")),
]


def _detail(dimension: str, category: str, points: float | None, winners: tuple | None) -> dict[str, Any]:
    detail: dict[str, Any] = {"dimension": dimension, "category": category, "method": "judge", "points": points,
                              "judge": {"grade": None if points is None else int(points), "parsed": points is not None,
                                        "repaired": False, "reasons": "", "output": ""}}
    if winners is not None:
        orders = [{"model_first": first, "winner": w, "repaired": False, "parsed": w is not None}
                  for first, w in zip((True, False), winners)]
        detail["pairwise"] = {"verdict": win_tie_loss.by_orders(orders), "reference_answer": "…", "orders": orders}
    return detail


def _records(points_shift: float = 0.0) -> list[dict[str, Any]]:
    return [{"id": qid, "prediction": "…",
             "scoring": _detail(d, c, None if p is None else min(10.0, max(0.0, p + points_shift)), w)}
            for qid, d, c, p, w in QUESTIONS]


def test_compare_reports_the_metrics_own_totals_and_pairwise_shares(tmp_path: Path) -> None:
    model, reference = _records(), _records(points_shift=-0.6)
    totals = aggregate.totals([r["scoring"] for r in model])  # what the metric writes into metrics.json
    ref = write_run(tmp_path / "ref", "ref", [], records=reference)
    run = write_run(tmp_path / "a", "a", [], records=model)
    document = compare_command(CompareOptions(runs=[run], reference=ref, output_dir=tmp_path / "out")).document
    compared = next(m for m in document["models"] if m["name"] == "a")

    assert compared["total"] == round(totals["score"], 4)
    assert compared["dimensions"] == {k.split(":", 1)[1]: round(v, 4) for k, v in totals.items()
                                      if k.startswith("dimension:")}
    assert compared["categories"] == {k.split(":", 1)[1]: round(v, 4) for k, v in totals.items()
                                      if k.startswith("category:")}
    assert (compared["judged"], compared["questions"]) == (totals["judged"], totals["questions"])

    pairwise = compared["vs_reference_pairwise"]["overall"]
    assert pairwise == {**{v: round(totals[f"pairwise_{v}"], 2) for v in win_tie_loss.VERDICTS},
                        "n": totals["pairwise_judged"]}
    # from grades: every judged question is 0.6 points better than the reference's (0 and 10 are clipped)
    expected = win_tie_loss.count(filter(None, (win_tie_loss.by_points(m["scoring"]["points"],
                                                                       r["scoring"]["points"], 0.5)
                                                for m, r in zip(model, reference))))
    assert compared["vs_reference"]["overall"] == win_tie_loss.outcome(expected)


def test_the_compare_scores_are_the_aggregations_scores() -> None:
    """compare tallies no mean of its own: model_scores is aggregate.scores, categories reordered."""
    from clue_tasks_superclue.compare import scores
    from clue_tasks_superclue.compare.runs import Question, Run

    run = Run(path=Path("a"), model="a", kind=None, parameters=None, settings={})
    for qid, dimension, category, points, _ in QUESTIONS:
        run.questions[qid] = Question(qid, 1, dimension, category, "judge", points)
    found = aggregate.scores((d, c, p) for _, d, c, p, _ in QUESTIONS)
    result = scores.model_scores(run, {"Hard": [], "理科": [], "文科": [], "其他": []})
    assert result["total"] == found.total and result["dimensions"] == found.dimensions
    assert list(result["categories"]) == ["Hard", "理科", "文科", "其他"]
    assert result["categories"] == found.categories


@pytest.mark.parametrize(("model", "reference", "verdict"), [
    (8.5, 8.0, "tie"), (8.6, 8.0, "win"), (7.5, 8.0, "tie"), (7.4, 8.0, "loss"), (None, 8.0, None), (8.0, None, None),
])
def test_the_margin_rule(model, reference, verdict) -> None:
    assert win_tie_loss.by_points(model, reference, 0.5) == verdict


@pytest.mark.parametrize(("letters", "verdict"), [
    (("A", "B"), "win"), (("B", "A"), "loss"), (("A", "A"), "tie"), (("平局", "B"), "tie"), (("A", None), None),
])
def test_both_orders_must_agree(letters, verdict) -> None:
    orders = [{"winner": win_tie_loss.order_winner(letter, first)} for letter, first in zip(letters, (True, False))]
    assert win_tie_loss.by_orders(orders) == verdict
