"""Circular evaluation's pieces: the orders a question is asked in, the picks mapped back, and the metric.

Hand-made picks only (no model): the end-to-end runs are in test_llm_circular_runs.py.
"""

from __future__ import annotations

import dataclasses
import math

import pytest

from clue_builtin import hooks as builtin_hooks
from clue_builtin.circular import compute, summary
from clue_core.plugin import ClueError, MultipleChoiceExample, Prediction
from clue_models_llm import circular
from clue_models_llm.prompts import Question


def example(id_: str, n: int, label: int | None = 0) -> MultipleChoiceExample:
    return MultipleChoiceExample(id_, "材料", "问题", tuple(f"选项{i}" for i in range(n)), label)


def test_rotations_are_opencompass_circular_patterns() -> None:
    # ABCD, BCDA, CDAB, DABC: rotation r shows original choice (k + r) % n at position k
    assert circular.rotations(4) == [(0, 1, 2, 3), (1, 2, 3, 0), (2, 3, 0, 1), (3, 0, 1, 2)]
    assert circular.orders("all", 2, 0, "x") == [(0, 1), (1, 0)]
    for n in range(1, 8):  # every choice shown once at every position over the rotations
        for position in range(n):
            assert sorted(order[position] for order in circular.rotations(n)) == list(range(n))


def test_seeded_permutations_are_distinct_start_with_the_original_and_repeat() -> None:
    drawn = circular.orders(5, 10, 42, "q1")
    assert len(drawn) == 5 and drawn[0] == tuple(range(10)) and len(set(drawn)) == 5
    assert all(sorted(order) == list(range(10)) for order in drawn)
    assert circular.orders(5, 10, 42, "q1") == drawn  # the same seed and id: the same orders
    assert circular.orders(5, 10, 43, "q1") != drawn and circular.orders(5, 10, 42, "q2") != drawn
    small = circular.orders(3, 4, 7, "q")  # enumerated below 8 choices
    assert len(small) == 3 and small[0] == (0, 1, 2, 3) and len(set(small)) == 3
    # more orders than there are: every one of them, once
    assert sorted(circular.orders(64, 3, 1, "q")) == sorted(__import__("itertools").permutations(range(3)))
    assert circular.orders("off", 4, 1, "q") == [(0, 1, 2, 3)]
    assert circular.orders("all", 1, 1, "q") == [(0,)]


def test_a_count_outside_the_bounds_is_refused_by_the_module_too() -> None:
    for bad in (65, -3, "some", 2.5):
        with pytest.raises(ClueError, match="circular"):
            circular.orders(bad, 4, 0, "q")


def test_reordered_moves_the_choices_and_the_label() -> None:
    moved = circular.reordered(example("a", 4, label=1), (1, 2, 3, 0))
    assert moved.choices == ("选项1", "选项2", "选项3", "选项0") and moved.label == 0
    assert circular.reordered(example("b", 3, label=None), (2, 0, 1)).label is None


class _Shown:
    """A renderer that lists the choices as the prompt (what the answer function sees)."""

    def render(self, item: MultipleChoiceExample) -> Question:
        n = len(item.choices)
        return Question("|".join(item.choices), tuple(item.choices), tuple(range(n)), tuple("ABCD"[:n]))


def _always(position: int | None):
    """An answer function that picks the choice shown at ``position`` (None: names none), recording calls."""
    calls: list[int] = []

    def answer(examples, questions):
        calls.append(len(questions))
        return [Prediction(e.id, position if position is None or position < len(q.choices) else None, None,
                           {"prompt": q.prompt}) for e, q in zip(examples, questions)]

    return answer, calls


def test_ask_maps_each_orders_pick_back_to_the_original_choice() -> None:
    examples = [example("a", 4, label=2), example("b", 3, label=None)]
    answer, calls = _always(0)
    predictions = circular.ask(examples, _Shown(), "all", 42, answer)
    assert calls == [4 + 1]  # one call: a's 4 rotations and b (unlabelled: asked once, as the submission needs)
    assert [p.value for p in predictions] == [0, 0]
    record = predictions[0].raw["circular"]
    assert record["orders"] == [[0, 1, 2, 3], [1, 2, 3, 0], [2, 3, 0, 1], [3, 0, 1, 2]]
    assert record["picks"] == [0, 1, 2, 3]  # always position A: a different original choice each time
    assert predictions[0].raw["prompt"] == "选项0|选项1|选项2|选项3"  # the original order's own raw kept
    assert "circular" not in predictions[1].raw
    none, _ = _always(None)
    assert circular.ask(examples[:1], _Shown(), "all", 42, none)[0].raw["circular"]["picks"] == [None] * 4


def _scored(rows: list[tuple[int, int | None, list[list[int]], list[int | None]]]) -> tuple[list, list]:
    """(gold, value, orders, picks) rows as examples and predictions."""
    examples, predictions = [], []
    for i, (gold, value, orders, picks) in enumerate(rows):
        examples.append(example(f"e{i}", len(orders[0]), label=gold))
        predictions.append(Prediction(f"e{i}", value, None, {"circular": {"orders": orders, "picks": picks}}))
    return examples, predictions


ROT4 = [list(o) for o in circular.rotations(4)]


def test_a_model_that_always_picks_a_has_pick_rate_100_at_a_and_circular_accuracy_0() -> None:
    rows = [(gold, 0, ROT4, [order[0] for order in ROT4]) for gold in (0, 1, 2, 3, 0)]
    totals = compute(*_scored(rows)).totals
    assert totals["pick_rate_A"] == 100.0 and "pick_rate_B" not in totals
    assert totals["circular_accuracy"] == 0.0 and totals["circular_questions"] == 5


def test_circular_accuracy_needs_every_order_right_and_never_exceeds_plain_accuracy() -> None:
    rows = [(1, 1, ROT4, [1, 1, 1, 1]),          # right every time
            (1, 1, ROT4, [1, 1, 0, 1]),          # right in the original order only
            (2, 0, ROT4, [0, 2, 2, 2]),          # wrong in the original order
            (0, None, ROT4, [None, 0, 0, 0])]    # no answer in the original order
    examples, predictions = _scored(rows)
    result = compute(examples, predictions)
    assert result.totals["circular_accuracy"] == 25.0
    assert result.per_example["circular_accuracy"] == [100.0, 0.0, 0.0, 0.0]
    plain = 100.0 * sum(p.value == e.label for e, p in zip(examples, predictions)) / len(examples)
    assert result.totals["circular_accuracy"] <= plain == 50.0
    rates = {k: v for k, v in result.totals.items() if k.startswith("pick_rate_")}
    assert math.isclose(sum(rates.values()), 100.0)
    assert rates["pick_rate_none"] == 100.0 / 16  # the one answer that named no choice
    assert set(result.totals) <= set(builtin_hooks.PRODUCES)


def test_the_original_order_counts_by_the_runs_decoded_prediction() -> None:
    # a decode step (CHID's joint assignment) changed the original order's answer: the prediction decides
    rows = [(3, 3, ROT4, [0, 3, 3, 3]), (3, 0, ROT4, [3, 3, 3, 3])]
    assert compute(*_scored(rows)).per_example["circular_accuracy"] == [100.0, 0.0]


def test_pick_rates_count_positions_over_every_answer_of_mixed_choice_counts() -> None:
    rot2 = [list(o) for o in circular.rotations(2)]
    rows = [(0, 0, rot2, [0, 0]),                # A then B (original 0 is shown at B in the rotation)
            (1, 1, ROT4, [1, 1, 1, 1])]          # B, A, D, C
    totals = compute(*_scored(rows)).totals
    assert totals == {"circular_accuracy": 100.0, "circular_questions": 2.0, "pick_rate_A": 200 / 6,
                      "pick_rate_B": 200 / 6, "pick_rate_C": 100 / 6, "pick_rate_D": 100 / 6}
    assert summary(totals) == "circular 100.0 (2 questions); picks A 33.3 · B 33.3 · C 16.7 · D 16.7"


def test_predictions_without_records_or_with_broken_ones_are_left_out() -> None:
    examples = [example("a", 4, 0), example("b", 4, 0), example("c", 4, None), example("d", 4, 1)]
    predictions = [Prediction("a", 0, None, {"prompt": "p"}),
                   Prediction("b", 0, None, {"circular": {"orders": [[0, 1, 2]], "picks": [0]}}),  # 3 of 4 choices
                   Prediction("c", 0, None, {"circular": {"orders": ROT4, "picks": [0, 1, 2, 3]}}),  # no gold
                   None]
    assert compute(examples, predictions).totals == {}
    assert summary({}) is None
    examples, predictions = _scored([(0, 0, ROT4, [0, True, 0, "0"])])  # picks that are not indices: no answer
    assert compute(examples, predictions).totals["circular_accuracy"] == 0.0


def test_skipped_says_why_circular_does_not_apply(kernel) -> None:
    c3, afqmc = kernel.tasks["c3"], kernel.tasks["afqmc"]
    assert circular.skipped(c3) is None and circular.skipped(kernel.tasks["superclue-close"]) is None
    assert circular.skipped(kernel.tasks["chid"]) is None and circular.skipped(kernel.tasks["fewclue-chid"]) is None
    assert "multiple-choice" in circular.skipped(afqmc)
    shown = "材料：{context}\n问题：{question}"
    hidden = dataclasses.replace(c3, prompt=dataclasses.replace(c3.prompt, template=shown))
    assert "{choices}" in circular.skipped(hidden)
    assert "preset" in circular.skipped(c3, preset=True)
    assert circular.enabled("all") and circular.enabled(3) and not circular.enabled("off")


def test_the_kernel_takes_a_learners_extra_metrics_only_when_they_fit_the_task(kernel) -> None:
    from types import SimpleNamespace

    from clue_core.errors import PluginError
    from clue_core.runner import _extra_metrics

    c3, afqmc = kernel.tasks["c3"], kernel.tasks["afqmc"]
    assert _extra_metrics(object(), kernel, c3) == ()  # a learner that adds none (every one before this)
    assert _extra_metrics(SimpleNamespace(extra_metrics=("circular",)), kernel, c3) == ("circular",)
    with pytest.raises(PluginError, match="tuple of metric names"):
        _extra_metrics(SimpleNamespace(extra_metrics=["circular"]), kernel, c3)
    with pytest.raises(PluginError, match="does not apply to classification"):
        _extra_metrics(SimpleNamespace(extra_metrics=("circular",)), kernel, afqmc)
    with pytest.raises(ClueError, match="nosuch"):
        _extra_metrics(SimpleNamespace(extra_metrics=("nosuch",)), kernel, c3)
