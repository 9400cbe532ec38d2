"""Circular evaluation's metric at its edges (review): a question of more than 26 choices, whose positions past
``Z`` have no letter. Its answers there once counted as ``pick_rate_none`` (no answer), a wrong number."""

from __future__ import annotations

import math

from clue_builtin import hooks as builtin_hooks
from clue_builtin.circular import compute
from clue_core.plugin import MultipleChoiceExample, Prediction
from clue_models_llm import circular


def _question(id_: str, n: int, gold: int, picks: list[int | None]) -> tuple[MultipleChoiceExample, Prediction]:
    orders = [list(o) for o in circular.rotations(n)][:len(picks)]
    example = MultipleChoiceExample(id_, "材料", "问题", tuple(f"选项{i}" for i in range(n)), gold)
    return example, Prediction(id_, picks[0], None, {"circular": {"orders": orders, "picks": picks}})


def test_a_question_of_30_choices_counts_in_circular_accuracy_not_in_the_pick_rates() -> None:
    # 30 choices, gold 0, asked in 3 rotations and right in each: shown at positions A, AD (30 - 1 = 29th), AC
    wide = _question("wide", 30, 0, [0, 0, 0])
    small = _question("small", 2, 1, [1, 0])  # right, then wrong: picks B then B (original 0 shown at B)
    result = compute([wide[0], small[0]], [wide[1], small[1]])
    totals = result.totals
    assert totals["circular_accuracy"] == 50.0 and totals["circular_questions"] == 2.0
    assert result.per_example["circular_accuracy"] == [100.0, 0.0]
    rates = {k: v for k, v in totals.items() if k.startswith("pick_rate_")}
    assert rates == {"pick_rate_B": 100.0}, rates  # the 2-choice question's answers only; no 'none'
    assert math.isclose(sum(rates.values()), 100.0) and set(totals) <= set(builtin_hooks.PRODUCES)
    alone = compute([wide[0]], [wide[1]]).totals  # only wide questions: accuracy, no rates at all
    assert alone == {"circular_accuracy": 100.0, "circular_questions": 1.0}


def test_circular_asked_where_it_does_not_apply_says_so_in_the_run_output(run_cli, tmp_path) -> None:
    """afqmc is a classification (no listed options): the run says circular was not applied, not only
    model_info, so a user who asked for it does not read the missing metrics as a silent failure."""
    result = run_cli("run", "afqmc", "--model", "llm-tiny", "--sample", "--splits", "dev", "--set", "circular=all",
                     "-o", tmp_path / "runs")
    assert result.exit_code == 0, result.output
    assert "[afqmc] llm-tiny: circular=all not applied: only multiple-choice questions" in result.output, \
        result.output
