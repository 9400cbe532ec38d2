"""End to end through the CLI: scripted models (fast), then llm-tiny answering and judging (slow)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clue_core.kernel import Kernel
from tests.superclue import scripted


def records(run: Path, task: str = "superclue") -> list[dict]:
    lines = (run / task / "predictions" / "dev.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def metrics(run: Path, task: str = "superclue") -> dict:
    return json.loads((run / task / "metrics.json").read_text(encoding="utf-8"))


@pytest.fixture
def kernel() -> Kernel:
    kernel = Kernel()
    kernel.register(scripted.ScriptedModels(), "scripted-models")
    return kernel


TOOL_CALL = {"name": "get_weather", "arguments": {"city": "北京", "date": "明天"}}


def test_scripted_runs_judged_pairwise_and_compared(run_cli, tmp_path, kernel, monkeypatch) -> None:
    monkeypatch.setattr(scripted, "ANSWERS", {"calc-001": "<<g9>>", "calc-002": "<<bad4>>", "know-001": "<<never>>",
                                              "tool-001": {"text": "", "calls": [TOOL_CALL]},
                                              "if-001": "长城是古代的防御工程。"})
    first = tmp_path / "a"
    result = run_cli("run", "superclue", "--model", "scripted-answers", "--set", "judge=scripted-judge", "--sample",
                     "-o", first, kernel=kernel)
    assert result.exit_code == 0, result.output
    found = metrics(first)
    dev = found["dev"]
    assert found["model"] == "scripted-answers" and found["task"] == "superclue"
    assert (dev["questions"], dev["unjudged"], dev["repair_asked"], dev["repaired"]) == (48, 1, 2, 1)
    by_id = {r["id"]: r for r in records(first)}
    calc = by_id["calc-001"]["scoring"]
    assert {k: calc[k] for k in ("dimension", "category", "method", "points")} == {
        "dimension": "计算", "category": "理科", "method": "judge", "points": 9.0}
    assert set(calc["judge"]) >= {"grade", "reasons", "output", "parsed", "repaired", "prompt"}
    assert by_id["calc-001"]["gold"].startswith("240×0.8")
    assert by_id["know-001"]["scoring"]["points"] is None
    assert by_id["tool-001"]["scoring"]["tool_call"] == {"expected": TOOL_CALL, "called": TOOL_CALL, "correct": True}
    assert by_id["if-001"]["scoring"]["constraints"]["strict"] is True
    assert json.loads((first / "superclue" / "judge.json").read_text(encoding="utf-8"))["name"] == "scripted-judge"
    # the same totals come back from the records alone
    judged = [r["scoring"]["points"] * 10 for r in by_id.values() if r["scoring"]["points"] is not None]
    assert dev["score"] == pytest.approx(sum(judged) / len(judged))

    monkeypatch.setattr(scripted, "ANSWERS", {"calc-001": "<<g6>>", "calc-002": "<<g8>>"})
    second = tmp_path / "b"
    result = run_cli("run", "superclue", "--model", "scripted-rival", "--set", "judge=scripted-judge",
                     "--set", f"reference_run={first}", "--sample", "-o", second, kernel=kernel)
    assert result.exit_code == 0, result.output
    by_id = {r["id"]: r for r in records(second)}
    assert by_id["calc-001"]["scoring"]["pairwise"]["verdict"] == "loss"
    assert by_id["calc-002"]["scoring"]["pairwise"]["verdict"] == "win"  # 8 against the reference's 4
    assert by_id["calc-002"]["scoring"]["pairwise"]["reference_answer"] == "<<bad4>>"
    dev = metrics(second)["dev"]
    assert dev["pairwise_judged"] + dev["pairwise_unjudged"] == 48
    assert metrics(second)["report_settings"]["reference_run"] == str(first)

    compared = tmp_path / "cmp"
    result = run_cli("compare", first, second, "--reference", first, "-o", compared, kernel=kernel)
    assert result.exit_code == 0, result.output
    comparison = json.loads((compared / "comparison.json").read_text(encoding="utf-8"))
    models = {m["name"]: m for m in comparison["models"]}
    assert set(models) == {"scripted-answers", "scripted-rival"} and comparison["judge"] == "scripted-judge"
    assert models["scripted-rival"]["vs_reference_pairwise"]["overall"]["n"] == dev["pairwise_judged"]
    assert models["scripted-answers"]["total"] == pytest.approx(metrics(first)["dev"]["score"], abs=1e-3)


def test_reference_run_without_a_judge_is_one_line(run_cli, tmp_path, kernel) -> None:
    result = run_cli("run", "superclue", "--model", "scripted-answers", "--set", f"reference_run={tmp_path}",
                     "--sample", "-o", tmp_path / "out", kernel=kernel)
    assert result.exit_code == 2 and "needs a judge" in result.output
    assert not (tmp_path / "out" / "superclue").exists()


def test_an_unknown_judge_is_refused_before_anything_runs(run_cli, tmp_path, kernel) -> None:
    result = run_cli("run", "superclue", "--model", "scripted-answers", "--set", "judge=scripted-jugde",
                     "--sample", "-o", tmp_path / "out", kernel=kernel)
    assert result.exit_code == 2 and "scripted-judge" in result.output  # did you mean


# -- llm-tiny: answers and judgments of a random model ----------------------------------

TINY = ["--set", "max_new_tokens=8", "--set", "judge=llm-tiny", "--set", "judge.max_new_tokens=8"]


@pytest.mark.slow
def test_llm_tiny_answers_and_judges_and_a_rerun_asks_nothing(run_cli, tmp_path) -> None:
    out = tmp_path / "tiny"
    result = run_cli("run", "superclue", "--model", "llm-tiny", *TINY, "--sample", "-o", out)
    assert result.exit_code == 0, result.output
    found = metrics(out)
    dev = found["dev"]
    judge_questions = [r for r in records(out) if r["scoring"]["method"] == "judge"]
    # a random model's judgments never parse: every judge question is unjudged, after a repair prompt
    assert len(judge_questions) == 36
    assert dev["unjudged"] == 36 and dev["repair_asked"] == 36 and dev["repaired"] == 0
    assert dev["judged"] == 12  # tool calls and constraints are checked by code
    assert all(r["scoring"]["points"] is None and r["scoring"]["judge"]["repaired"] for r in judge_questions)
    assert dev["judge_generated"] == 72 and dev["judge_cached"] == 36  # the repair round re-read turn 1
    assert found["model_info"]["cache"]["misses"] > 0

    result = run_cli("run", "superclue", "--model", "llm-tiny", *TINY, "--sample", "-o", out, "--overwrite")
    assert result.exit_code == 0, result.output
    again = metrics(out)
    assert again["model_info"]["cache"]["misses"] == 0 and again["dev"]["judge_generated"] == 0
    assert again["dev"] == {**dev, "judge_generated": 0, "judge_cached": 108}
    judge_info = json.loads((out / "superclue" / "judge.json").read_text(encoding="utf-8"))
    assert judge_info["cache"]["misses"] == 0 and judge_info["decoding"]["max_new_tokens"] == 8


@pytest.mark.slow
def test_a_run_killed_while_judging_resumes_without_asking_again(run_cli, tmp_path, monkeypatch) -> None:
    from clue_tasks_superclue import aggregate

    out = tmp_path / "killed"
    real = aggregate.totals

    def killed(details):
        raise KeyboardInterrupt

    monkeypatch.setattr(aggregate, "totals", killed)
    result = run_cli("run", "superclue", "--model", "llm-tiny", *TINY, "--sample", "-o", out)
    assert result.exit_code == 130 and "the same command with --resume continues it" in result.output
    assert (out / ".superclue.staging").is_dir() and not (out / "superclue").exists()
    monkeypatch.setattr(aggregate, "totals", real)
    result = run_cli("run", "superclue", "--model", "llm-tiny", *TINY, "--sample", "-o", out, "--resume")
    assert result.exit_code == 0, result.output
    found = metrics(out)
    assert found["model_info"]["cache"]["misses"] == 0 and found["dev"]["judge_generated"] == 0
    assert found["dev"]["unjudged"] == 36


@pytest.mark.slow
def test_superclue_close_with_llm_tiny(run_cli, tmp_path) -> None:
    out = tmp_path / "close"
    result = run_cli("run", "superclue-close", "--model", "llm-tiny", "--sample", "-o", out)
    assert result.exit_code == 0, result.output
    dev = metrics(out, "superclue-close")["dev"]
    rows = records(out, "superclue-close")
    assert len(rows) == 29 and all(0 <= r["prediction"] < 4 for r in rows)
    right = [r["prediction"] == r["gold"] for r in rows]
    assert dev["accuracy"] == pytest.approx(100 * sum(right) / len(rows))
    per_dimension = {name.split(":", 1)[1] for name in dev if name.startswith("close:")}
    assert per_dimension == {r["id"].split("/", 1)[0] for r in rows} and len(per_dimension) == 10
