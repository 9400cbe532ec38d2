"""A panel of judges end to end: each judge's grade kept, the panel's by judge_aggregate, agreement in metrics.json.

The judges are scripted (tests/superclue/scripted.py) and one of them, ``shifted-judge``, reads a
``shift`` setting: its grade is the scripted grade plus ``shift`` (kept within 1–10), so
``--set judge.1.shift=-3`` makes the second judge of a panel harsher, and shows that each
judge gets its own settings.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from clue_core.kernel import Kernel
from clue_core.plugin import ModelSpec, Prediction, Setting, TaskSpec, hookimpl
from clue_tasks_superclue import panel
from clue_tasks_superclue.hooks import OPEN_QUESTION
from tests.superclue import scripted

SHIFT = Setting("shift", int, 0, "added to every grade the scripted judge gives (kept within 1-10)")


class ShiftedJudge(scripted.ScriptedJudge):
    """The scripted judge, its grades moved by ``shift``."""

    def __init__(self, shift: int) -> None:
        super().__init__()
        self.shift = shift

    def predict(self, examples: Sequence[Any]) -> list[Prediction]:
        moved = []
        for prediction in super().predict(examples):
            value = re.sub(r"评分：(\d+)$", lambda m: f"评分：{min(10, max(1, int(m.group(1)) + self.shift))}",
                           str(prediction.value))
            moved.append(Prediction(prediction.id, value, None, prediction.raw))
        return moved

    def run_info(self) -> dict[str, Any]:
        return {"shift": self.shift}


def create_shifted(argument: str | None, task: TaskSpec, settings: Mapping[str, Any]) -> ShiftedJudge:
    return ShiftedJudge(int(settings["shift"]))


class ShiftedModels:
    @hookimpl
    def clue_models(self) -> list[ModelSpec]:
        return [ModelSpec("shifted-judge", f"{__name__}:create_shifted", (OPEN_QUESTION,), "scripted, shifted",
                          trains=False, settings=(SHIFT,))]


@pytest.fixture
def kernel() -> Kernel:
    kernel = Kernel()
    kernel.register(scripted.ScriptedModels(), "scripted-models")
    kernel.register(ShiftedModels(), "shifted-models")
    return kernel


def records(run: Path) -> dict[str, dict[str, Any]]:
    lines = (run / "superclue" / "predictions" / "dev.jsonl").read_text(encoding="utf-8").splitlines()
    return {str(r["id"]): r for r in map(json.loads, lines)}


def dev(run: Path) -> dict[str, Any]:
    return json.loads((run / "superclue" / "metrics.json").read_text(encoding="utf-8"))["dev"]


PANEL = ["--set", "judge=shifted-judge,shifted-judge,shifted-judge", "--set", "judge.1.shift=-3",
         "--set", "judge.2.shift=1"]


def test_three_judges_grade_every_answer_and_agree_as_far_as_they_do(run_cli, tmp_path, kernel, monkeypatch) -> None:
    monkeypatch.setattr(scripted, "ANSWERS", {"calc-001": "<<g9>>", "calc-002": "<<bad4>>", "know-001": "<<never>>",
                                              "know-002": "<<g2>>", "logic-001": "<<g7>>"})
    out = tmp_path / "panel"
    result = run_cli("run", "superclue", "--model", "scripted-answers", *PANEL, "--set", "judge_aggregate=median",
                     "--sample", "-o", out, kernel=kernel)
    assert result.exit_code == 0, result.output
    found = records(out)
    calc = found["calc-001"]["scoring"]
    assert [(j["judge"], j["model"], j["score"], j["band"]) for j in calc["judges"]] == [
        (0, "shifted-judge", 9, "优秀"), (1, "shifted-judge", 6, "及格"), (2, "shifted-judge", 10, "优秀")]
    assert calc["judge"]["grade"] == calc["points"] == 9.0 and calc["judge"]["band"] == "优秀"
    assert calc["judge"]["aggregate"] == "median" and calc["judge"]["graded_by"] == 3
    assert calc["judge"]["reasons"].startswith("[judge.0 shifted-judge] ") and "评分" in calc["judge"]["prompt"]
    assert all(j["reasons"] and "prompt" not in j for j in calc["judges"])
    # the repair prompt is asked judge by judge, and counted so
    assert [j["repaired"] for j in found["calc-002"]["scoring"]["judges"]] == [True, True, True]
    assert found["calc-002"]["scoring"]["points"] == 4.0  # 4, 1, 5: median 4
    never = found["know-001"]["scoring"]
    assert never["points"] is None and never["judge"]["graded_by"] == 0 and never["judge"]["band"] is None
    totals = dev(out)
    assert totals["unjudged"] == 1 and totals["repair_asked"] == 6 and totals["repaired"] == 3
    assert -1 <= totals["judge_alpha"] < 1 and -1 <= totals["judge_kappa"] < 1
    judge_file = json.loads((out / "superclue" / "judge.json").read_text(encoding="utf-8"))
    assert [info["shift"] for info in judge_file["panel"]] == [0, -3, 1]
    assert judge_file["judge_aggregate"] == "median"
    assert judge_file["agreement"]["judge_alpha"] == totals["judge_alpha"] and judge_file["agreement"]["notes"] == []
    # the same totals come back from the records alone
    from clue_tasks_superclue import aggregate

    assert aggregate.agreement([r["scoring"] for r in found.values()])[0] == {
        k: totals[k] for k in ("judge_alpha", "judge_kappa")}


def test_judges_that_agree_perfectly_have_alpha_and_kappa_1(run_cli, tmp_path, kernel, monkeypatch) -> None:
    monkeypatch.setattr(scripted, "ANSWERS", {"calc-001": "<<g9>>", "know-002": "<<g2>>", "logic-001": "<<g7>>"})
    out = tmp_path / "same"
    result = run_cli("run", "superclue", "--model", "scripted-answers", "--set",
                     "judge=scripted-judge,scripted-judge", "--sample", "-o", out, kernel=kernel)
    assert result.exit_code == 0, result.output
    totals = dev(out)
    assert totals["judge_alpha"] == pytest.approx(1.0) and totals["judge_kappa"] == pytest.approx(1.0)
    assert "position_consistency" not in totals  # no reference run, no pairwise judging


def test_agreement_that_is_undefined_is_left_out_with_a_note(run_cli, tmp_path, kernel) -> None:
    out = tmp_path / "flat"  # every answer <<g5>>: every grade the same, nothing to agree on
    result = run_cli("run", "superclue", "--model", "scripted-answers", "--set",
                     "judge=scripted-judge,scripted-judge", "--sample", "-o", out, kernel=kernel)
    assert result.exit_code == 0, result.output
    totals = dev(out)
    assert "judge_alpha" not in totals and "judge_kappa" not in totals
    assert "NaN" not in (out / "superclue" / "metrics.json").read_text(encoding="utf-8")
    assert "note: judge_alpha left out: fewer than two grades per question, or every grade the same" in result.output
    notes = json.loads((out / "superclue" / "judge.json").read_text(encoding="utf-8"))["agreement"]["notes"]
    assert len(notes) == 2


def test_a_panel_judges_pairwise_and_position_consistency_is_counted(run_cli, tmp_path, kernel, monkeypatch) -> None:
    monkeypatch.setattr(scripted, "ANSWERS", {"calc-001": "<<g9>>", "calc-002": "<<g3>>"})
    first = tmp_path / "a"
    assert run_cli("run", "superclue", "--model", "scripted-answers", "--sample", "-o", first,
                   kernel=kernel).exit_code == 0
    # calc-002: the rival's answer carries <<biasA>>, so each judge prefers whichever answer it sees first
    monkeypatch.setattr(scripted, "ANSWERS", {"calc-001": "<<g4>>", "calc-002": "<<g8>> <<biasA>>"})
    second = tmp_path / "b"
    result = run_cli("run", "superclue", "--model", "scripted-rival", *PANEL, "--set", f"reference_run={first}",
                     "--sample", "-o", second, kernel=kernel)
    assert result.exit_code == 0, result.output
    found = records(second)
    lost = found["calc-001"]["scoring"]["pairwise"]
    assert lost["verdict"] == "loss" and [j["verdict"] for j in lost["judges"]] == ["loss"] * 3
    assert [o["judge"] for o in lost["orders"]] == [0, 0, 1, 1, 2, 2]
    biased = found["calc-002"]["scoring"]["pairwise"]
    assert [o["winner"] for o in biased["orders"][:2]] == ["model", "reference"] and biased["verdict"] == "tie"
    totals = dev(second)
    # identical answers (<<g5>> against <<g5>>) are one prompt per judge and say nothing about position
    differing = sum(1 for r in found.values() if r["scoring"]["pairwise"]["orders"]
                    and r["prediction"] != r["scoring"]["pairwise"]["reference_answer"])
    assert differing == 2
    assert totals["position_consistency"] == pytest.approx(50.0)  # calc-001 consistent, calc-002 not, per judge


def test_a_single_judge_has_no_panel_fields_but_does_get_position_consistency(run_cli, tmp_path, kernel,
                                                                                monkeypatch) -> None:
    monkeypatch.setattr(scripted, "ANSWERS", {"calc-001": "<<g9>>"})
    first = tmp_path / "a"
    assert run_cli("run", "superclue", "--model", "scripted-answers", "--set", "judge=scripted-judge", "--sample",
                   "-o", first, kernel=kernel).exit_code == 0
    found = records(first)
    assert all("judges" not in r["scoring"] for r in found.values())
    assert set(found["calc-001"]["scoring"]["judge"]) == {"grade", "reasons", "output", "parsed", "repaired", "prompt"}
    assert not {"judge_alpha", "judge_kappa"} & set(dev(first))
    assert json.loads((first / "superclue" / "judge.json").read_text(encoding="utf-8")) == {"name": "scripted-judge",
                                                                                           "fits": 1}
    monkeypatch.setattr(scripted, "ANSWERS", {"calc-001": "<<g4>>"})
    second = tmp_path / "b"
    assert run_cli("run", "superclue", "--model", "scripted-rival", "--set", "judge=scripted-judge", "--set",
                   f"reference_run={first}", "--sample", "-o", second, kernel=kernel).exit_code == 0
    assert dev(second)["position_consistency"] == 100.0


@pytest.mark.parametrize(("grades", "how", "points"), [
    ([8, 6, 10], "mean", 8.0), ([8, 6, 10], "median", 8.0), ([8, 6, 10, 9], "median", 8.5),
    ([9, 10, 7], "majority", 9.5),          # 优秀 twice: the mean of those two
    ([8, 6, 10], "majority", 6.0),          # one judge per band: the lowest band wins the tie
    ([10, 10, 5, 5], "majority", 5.0),      # 优秀 and 不及格 tie: 不及格
    ([], "mean", None),
])
def test_aggregation_modes(grades: list[int], how: str, points: float | None) -> None:
    assert panel.aggregate(grades, how) == points


def test_bands_and_pairwise_verdicts() -> None:
    assert [panel.band_of(g) for g in (10, 9, 8.9, 7, 6, 5.99, 1)] == ["优秀", "优秀", "良好", "良好", "及格", "不及格",
                                                                       "不及格"]
    assert panel.verdict(["win", "win", "loss"], "mean") == "win"
    assert panel.verdict(["win", "tie", "tie"], "mean") == "win"
    assert panel.verdict(["win", "tie", "tie"], "majority") == "tie"
    assert panel.verdict(["win", "loss"], "majority") == "tie"
    assert panel.verdict(["win", "loss", None], "median") == "tie"
    assert panel.verdict([None, None], "mean") is None


def test_an_unknown_aggregation_is_refused_when_planned(run_cli, tmp_path, kernel) -> None:
    result = run_cli("run", "superclue", "--model", "scripted-answers", "--set", "judge=scripted-judge,scripted-judge",
                     "--set", "judge_aggregate=mode", "--sample", "-o", tmp_path / "o", kernel=kernel)
    assert result.exit_code == 2 and "expected one of 'mean', 'median', 'majority'" in result.output
    assert not (tmp_path / "o").exists()


@pytest.mark.slow
def test_three_llm_tiny_judges_end_to_end(run_cli, tmp_path) -> None:
    out = tmp_path / "tiny"
    result = run_cli("run", "superclue", "--model", "llm-tiny", "--set", "max_new_tokens=8",
                     "--set", "judge=llm-tiny,llm-tiny,llm-tiny", "--set", "judge.max_new_tokens=8",
                     "--set", "judge.2.max_new_tokens=4", "--sample", "-o", out)
    assert result.exit_code == 0, result.output
    totals = dev(out)
    # a random model never follows the format: 36 judge questions x 3 judges, each after a repair prompt
    assert totals["unjudged"] == 36 and totals["repair_asked"] == 108 and totals["repaired"] == 0
    assert "judge_alpha" not in totals and "note: judge_alpha left out" in result.output
    judge_file = json.loads((out / "superclue" / "judge.json").read_text(encoding="utf-8"))
    assert [info["decoding"]["max_new_tokens"] for info in judge_file["panel"]] == [8, 8, 4]
    assert all(len(r["scoring"]["judges"]) == 3 for r in records(out).values() if r["scoring"]["method"] == "judge")
