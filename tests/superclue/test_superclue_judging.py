"""Judging, repair, pairwise rules and aggregation on fixed judgments from a scripted judge."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clue_core.errors import ClueError
from clue_core.plugin import Prediction, RunContext
from clue_tasks_superclue import hooks, metric
from clue_tasks_superclue.examples import OpenQuestionExample
from clue_tasks_superclue.judge_prompts import (
    GRADE_REPAIR,
    PAIRWISE_REPAIR,
    grade_prompt,
    pairwise_prompt,
    parse_grade,
    parse_verdict,
)
from clue_tasks_superclue.tool_calls import calls_of, check_call, values_equal
from tests.superclue import scripted

TOOL = {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}


def question(id_: str, dimension: str, category: str, turns=("问题",), **more) -> OpenQuestionExample:
    return OpenQuestionExample(id=id_, dimension=dimension, category=category, turns=tuple(turns), **more)


def answer(id_: str, *said: str, calls=None) -> Prediction:
    raw = {"answers": list(said)}
    if calls is not None:
        raw["tool_calls"] = [[] for _ in said[:-1]] + [calls]
    return Prediction(id_, said[-1], None, raw)


def context(tmp_path: Path, judges: list) -> RunContext:
    def load(name: str, namespace: str):
        assert (name, namespace) == ("scripted-judge", "judge")
        judge = scripted.ScriptedJudge()
        judges.append(judge)
        return judge

    return RunContext(task=hooks.SUPERCLUE, run_dir=tmp_path, load_model=load)


def run_metric(tmp_path, examples, predictions, *, judge="scripted-judge", reference_run=""):
    judges: list = []
    scripted.ASKED.clear()
    result = metric.compute(examples, predictions, settings={"judge": judge, "reference_run": reference_run},
                            context=context(tmp_path, judges))
    return result, judges


def test_parsing_is_strict() -> None:
    assert parse_grade("理由：正确。\n评分：8").value == 8
    assert parse_grade("理由：很好\n过程完整\n\n评分: 10 ").reasons == "很好\n过程完整"
    for broken in ("评分：8", "理由：好\n评分：8分", "理由：好\n**评分：8**", "理由：好\n评分：0", "理由：好\n评分：11",
                   "评分：8\n理由：好", "理由：好\n评分：八", ""):
        assert parse_grade(broken) is None, broken
    assert parse_verdict("理由：A更完整\n胜者：A").value == "A"
    assert parse_verdict("理由：一样\n胜者：平局").value == "平局"
    for broken in ("胜者：A", "理由：好\n胜者：C", "理由：好\n胜者：A更好", "理由：好\n获胜：A"):
        assert parse_verdict(broken) is None, broken


def test_prompts_show_every_turn_the_reference_and_the_rubric() -> None:
    example = question("q", "计算", "理科", ("第一问", "第二问"), reference="参考", rubric="标准")
    prompt = grade_prompt(example, ["答一", "答二"])
    shown = ("第1轮 用户：第一问", "第1轮 助手：答一", "第2轮 助手：答二",
             "【参考答案】\n参考", "【本题的评分标准】\n标准", "计算过程")
    assert all(part in prompt for part in shown)
    assert prompt.rstrip().endswith("评分：<1到10的整数>")
    pair = pairwise_prompt(example, ["甲一", "甲二"], ["乙一", "乙二"])
    assert pair.index("第2轮 助手A：甲二") < pair.index("第2轮 助手B：乙二")


def test_grades_repairs_and_aggregation(tmp_path) -> None:
    examples = [
        question("c1", "计算", "理科"), question("c2", "计算", "理科"), question("l1", "逻辑推理", "理科"),
        question("k1", "知识百科", "文科"), question("k2", "知识百科", "文科"),
        question("i1", "精确指令遵循", "Hard", constraints=({"type": "max_chars", "value": 5},)),
        question("i2", "精确指令遵循", "Hard", constraints=({"type": "starts_with", "value": "好"},
                                                             {"type": "no_commas"})),
        question("t1", "工具使用", "文科", tools=(TOOL,), expected_call={"name": "get_weather",
                                                                       "arguments": {"city": "北京"}}),
    ]
    predictions = [
        answer("c1", "<<g8>>"), answer("c2", "<<bad6>>"), answer("l1", "<<g10>>"), answer("k1", "<<never>>"),
        answer("k2", "<<g3>>"), answer("i1", "短。"), answer("i2", "**好**，的"),
        answer("t1", "", calls=[{"name": "get_weather", "arguments": {"city": " 北京", "unit": "c"}}]),
    ]
    result, judges = run_metric(tmp_path, examples, predictions)
    details = {e.id: d for e, d in zip(examples, result.details)}
    assert [details[i]["points"] for i in ("c1", "c2", "l1", "k1", "k2", "i1", "i2", "t1")] == [
        8.0, 6.0, 10.0, None, 3.0, 10.0, 0.0, 10.0]
    assert details["c2"]["judge"]["repaired"] and details["c2"]["judge"]["parsed"]
    assert details["c2"]["judge"]["first_output"].startswith("评分：6")
    assert details["k1"]["judge"] | {"prompt": None} == {
        "grade": None, "reasons": None, "parsed": False, "repaired": True, "prompt": None,
        "output": "这个回答还可以，给7分吧。", "first_output": "这个回答还可以，给7分吧。"}
    assert details["c1"]["judge"]["repaired"] is False and "first_output" not in details["c1"]["judge"]
    assert details["i2"]["constraints"]["strict"] is False and details["i2"]["constraints"]["loose"] is False
    assert details["t1"]["tool_call"]["correct"] is True
    # the repair is a second turn after the judge's own bad output; nothing else is asked twice
    repairs = [turns for turns in scripted.ASKED if len(turns) == 2]
    assert sorted(t[1] for t in repairs) == [GRADE_REPAIR, GRADE_REPAIR]
    assert len(judges) == 1 and judges[0].fits == 1
    totals = result.totals
    assert totals["dimension:计算"] == 70.0 and totals["dimension:逻辑推理"] == 100.0
    assert totals["dimension:知识百科"] == 30.0 and totals["dimension:精确指令遵循"] == 50.0
    assert totals["dimension:工具使用"] == 100.0
    assert totals["category:理科"] == 85.0 and totals["category:文科"] == 65.0 and totals["category:Hard"] == 50.0
    assert totals["score"] == pytest.approx((80 + 60 + 100 + 30 + 100 + 0 + 100) / 7)
    assert (totals["questions"], totals["judged"], totals["unjudged"]) == (8, 7, 1)
    assert (totals["repair_asked"], totals["repaired"]) == (2, 1)
    # i2: starts_with fails strictly (bold marks) and passes loosely; no_commas fails both ways
    assert totals["ifeval_prompt_strict"] == 50.0 and totals["ifeval_instruction_strict"] == pytest.approx(100 / 3)
    assert totals["ifeval_prompt_loose"] == 50.0 and totals["ifeval_instruction_loose"] == pytest.approx(200 / 3)
    assert totals["tool_call_accuracy"] == 100.0
    assert result.per_example["score"] == [80.0, 60.0, 100.0, None, 30.0, 100.0, 0.0, 100.0]
    assert json.loads((tmp_path / metric.JUDGE_FILE).read_text(encoding="utf-8")) == {"name": "scripted-judge",
                                                                                       "fits": 1}


def test_without_a_judge_judge_questions_are_counted_unjudged(tmp_path) -> None:
    examples = [question("c1", "计算", "理科"), question("i1", "精确指令遵循", "Hard",
                                                           constraints=({"type": "no_commas"},))]
    result, judges = run_metric(tmp_path, examples, [answer("c1", "<<g9>>"), answer("i1", "好")], judge="")
    assert judges == [] and scripted.ASKED == []
    assert result.details[0]["points"] is None and "no judge" in result.details[0]["judge"]["reasons"]
    assert (result.totals["judged"], result.totals["unjudged"], result.totals["score"]) == (1, 1, 100.0)


def test_a_missing_answer_scores_zero_without_asking(tmp_path) -> None:
    result, _ = run_metric(tmp_path, [question("c1", "计算", "理科")], [None])
    assert result.details[0]["points"] == 0.0 and result.details[0]["missing"] is True
    assert scripted.ASKED == []


def write_reference(folder: Path, records: list[dict]) -> Path:
    """A complete superclue run holding just these prediction records (and its manifest and metrics)."""
    path = folder / "superclue" / "predictions" / "dev.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    manifest = {"task": "superclue", "status": "complete"}
    (folder / "superclue" / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    metrics = {"task": "superclue", "primary_metric": "score", "dev": {}}
    (folder / "superclue" / "metrics.json").write_text(json.dumps(metrics), encoding="utf-8")
    return folder


def test_pairwise_both_orders_and_the_verdict_rules(tmp_path) -> None:
    reference = write_reference(tmp_path / "ref", [
        {"id": "w", "prediction": "<<g5>>", "raw": {"answers": ["<<g5>>"]}},
        {"id": "l", "prediction": "<<g9>>"},
        {"id": "t", "prediction": "<<g6>>"},
        {"id": "b", "prediction": "<<g1>>"},
        {"id": "n", "prediction": "<<g4>>"},
        {"id": "r", "prediction": "<<g2>>"},
    ])
    ids = ["w", "l", "t", "b", "n", "r", "m"]
    examples = [question(i, "计算", "理科") for i in ids]
    predictions = [answer("w", "<<g8>>"), answer("l", "<<g3>>"), answer("t", "<<g6>>"),
                   answer("b", "<<g9>> <<biasA>>"), answer("n", "<<never>>"), answer("r", "<<bad7>>"),
                   answer("m", "<<g7>>")]
    result, _ = run_metric(tmp_path / "run", examples, predictions, reference_run=str(reference))
    pairs = {e.id: d.get("pairwise") for e, d in zip(examples, result.details)}
    assert {i: pairs[i]["verdict"] for i in ids} == {"w": "win", "l": "loss", "t": "tie", "b": "tie", "n": None,
                                                     "r": "win", "m": None}
    flipped = pairs["b"]["orders"]
    assert [(o["model_first"], o["winner"]) for o in flipped] == [(True, "model"), (False, "reference")]
    assert pairs["w"]["reference_answer"] == "<<g5>>" and pairs["m"]["orders"] == []
    first = pairs["w"]["orders"][0]["prompt"]
    assert first.index("<<g8>>") < first.index("<<g5>>")  # model shown first as A, then swapped
    second = pairs["w"]["orders"][1]["prompt"]
    assert second.index("<<g5>>") < second.index("<<g8>>")
    assert all(o["repaired"] and o["parsed"] for o in pairs["r"]["orders"])
    assert [t[1] for t in scripted.ASKED if len(t) == 2].count(PAIRWISE_REPAIR) == 4  # r twice, n twice
    totals = result.totals
    assert (totals["pairwise_judged"], totals["pairwise_unjudged"], totals["pairwise_missing"]) == (5, 1, 1)
    assert (totals["pairwise_win"], totals["pairwise_tie"], totals["pairwise_loss"]) == (40.0, 40.0, 20.0)
    # identical answers make both orders one prompt: asked once, shared by both orders
    same = [turns for turns in scripted.ASKED if turns[0] == pairs["t"]["orders"][0]["prompt"]]
    assert len(same) == 1 and pairs["t"]["orders"][1]["prompt"] == pairs["t"]["orders"][0]["prompt"]
    # grading happened as well, under its own names
    assert totals["dimension:计算"] == pytest.approx((80 + 30 + 60 + 90 + 70 + 70) / 6)


def test_reference_run_needs_a_judge_and_a_run(tmp_path) -> None:
    examples, predictions = [question("c1", "计算", "理科")], [answer("c1", "<<g9>>")]
    with pytest.raises(ClueError, match="needs a judge"):
        run_metric(tmp_path, examples, predictions, judge="", reference_run=str(tmp_path))
    with pytest.raises(ClueError, match="no such run folder"):
        run_metric(tmp_path, examples, predictions, reference_run=str(tmp_path / "nowhere"))
    bad = write_reference(tmp_path / "bad", [{"prediction": "x"}])
    with pytest.raises(ClueError, match=r"dev.jsonl:1: field 'id': expected a string or integer id, got None"):
        run_metric(tmp_path, examples, predictions, reference_run=str(bad))


def test_tool_call_equality() -> None:
    expected = {"name": "convert", "arguments": {"amount": 100, "to": "CNY", "opts": {"round": [1, 2]}}}
    same = {"name": "convert", "arguments": {"amount": 100.0, "to": " CNY ", "opts": {"round": [1, 2]}, "x": 1}}
    assert check_call(expected, [{"name": "other", "arguments": {}}, same])["correct"] is True
    for wrong in ({"name": "convert", "arguments": {"amount": "100", "to": "CNY", "opts": {"round": [1, 2]}}},
                  {"name": "convert", "arguments": {"amount": 100, "to": "CNY", "opts": {"round": [2, 1]}}},
                  {"name": "convert", "arguments": {"amount": 100, "opts": {"round": [1, 2]}}},
                  {"name": "Convert", "arguments": same["arguments"]}):
        result = check_call(expected, [wrong])
        assert result["correct"] is False and result["called"] == wrong
    assert check_call(expected, []) == {"expected": expected, "called": None, "correct": False}
    assert values_equal(True, True) and not values_equal(True, 1) and not values_equal(1, True)


def test_calls_are_read_from_the_record_or_else_from_the_text() -> None:
    recorded = {"tool_calls": [[], [{"name": "f", "arguments": '{"a": 1}'}]]}
    assert calls_of(recorded, "") == [{"name": "f", "arguments": {"a": 1}}]
    text = '好的，我来查询。\n```json\n{"name": "get_weather", "arguments": {"city": "北京"}}\n```'
    assert calls_of({"answers": [text]}, text) == [{"name": "get_weather", "arguments": {"city": "北京"}}]
    assert calls_of(None, "没有调用任何工具 {不是JSON}") == []
