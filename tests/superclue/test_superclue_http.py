"""The whole path over HTTP: two models and a judge behind OpenAI-compatible servers on 127.0.0.1.

answer (openai:alpha, openai:beta) → judge over HTTP (openai:judge, scripted, strict format,
one repair) → parse → aggregate → pairwise against alpha's run → ``clue-core compare``; then a
repeated run sends no request at all, counted at the servers.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clue_tasks_superclue.judge_prompts import GRADE_REPAIR
from tests.superclue import scripted
from tests.support.openai_server import CHAT, OpenAIServer, ScriptedEngine

pytestmark = pytest.mark.slow

TOOL_CALL = {"name": "get_weather", "arguments": {"city": "北京", "date": "明天"}}


def answerer(grade: int, calls_tools: bool):
    """A model that answers every turn with a graded marker; special answers for a few questions."""

    def answer(endpoint: str, body: dict) -> str | dict:
        assert endpoint == CHAT
        turn = body["messages"][-1]["content"]
        if body.get("tools"):
            if calls_tools and "北京的天气" in turn:
                return {"content": "", "tool_calls": [TOOL_CALL]}
            return "我不知道该调用哪个工具。"
        if "四大发明" in turn:
            return "<<bad7>>"
        if "红楼梦" in turn:
            return "<<never>>"
        if "介绍长城" in turn:
            return "长城是古代的防御工程。"
        return f"<<g{grade}>>"

    return answer


def judge(endpoint: str, body: dict) -> str:
    assert endpoint == CHAT
    turns = tuple(m["content"] for m in body["messages"] if m["role"] == "user")
    return scripted.judge_output(turns)


@pytest.fixture
def servers(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with OpenAIServer(ScriptedEngine(answerer(6, False)), model="alpha") as alpha, \
            OpenAIServer(ScriptedEngine(answerer(8, True)), model="beta") as beta, \
            OpenAIServer(ScriptedEngine(judge), model="judge") as referee:
        yield alpha, beta, referee


def run_args(server: OpenAIServer, referee: OpenAIServer, out: Path, *more: str) -> list[str]:
    return ["run", "superclue", "--model", f"openai:{server.model}", "--set", f"base_url={server.url}",
            "--set", "chat=true", "--set", "judge=openai:judge", "--set", f"judge.base_url={referee.url}",
            "--set", "judge.chat=true", "--sample", "-o", out, *more]


def metrics(run: Path) -> dict:
    return json.loads((run / "superclue" / "metrics.json").read_text(encoding="utf-8"))


def records(run: Path) -> dict:
    lines = (run / "superclue" / "predictions" / "dev.jsonl").read_text(encoding="utf-8").splitlines()
    return {r["id"]: r for r in map(json.loads, lines)}


def test_two_served_models_a_served_judge_and_compare(run_cli, tmp_path, servers) -> None:
    alpha, beta, referee = servers
    first, second = tmp_path / "alpha", tmp_path / "beta"
    result = run_cli(*run_args(alpha, referee, first))
    assert result.exit_code == 0, result.output
    dev = metrics(first)["dev"]
    # 36 judge questions: 34 graded 6, one repaired to 7, one never parses
    assert (dev["judged"], dev["unjudged"], dev["repair_asked"], dev["repaired"]) == (47, 1, 2, 1)
    assert dev["dimension:计算"] == 60.0 and dev["tool_call_accuracy"] == 0.0
    by_id = records(first)
    assert by_id["know-001"]["scoring"]["judge"]["grade"] == 7 and by_id["know-003"]["scoring"]["points"] is None
    repairs = [r for r in referee.requests if r.body["messages"][-1]["content"] == GRADE_REPAIR]
    assert len(repairs) == 2
    assert [m["role"] for m in repairs[0].body["messages"]] == ["user", "assistant", "user"]

    result = run_cli(*run_args(beta, referee, second, "--set", f"reference_run={first}"))
    assert result.exit_code == 0, result.output
    dev = metrics(second)["dev"]
    by_id = records(second)
    assert by_id["tool-001"]["scoring"]["tool_call"]["correct"] is True
    assert by_id["tool-001"]["raw"]["tool_calls"][-1] == [TOOL_CALL]
    assert by_id["calc-001"]["scoring"]["pairwise"]["verdict"] == "win"  # 8 against 6, in both orders
    assert by_id["know-003"]["scoring"]["pairwise"]["verdict"] is None  # never parses
    assert dev["pairwise_win"] > 50 and dev["pairwise_judged"] + dev["pairwise_unjudged"] == 48

    compared = tmp_path / "cmp"
    result = run_cli("compare", first, second, "--reference", first, "-o", compared)
    assert result.exit_code == 0, result.output
    comparison = json.loads((compared / "comparison.json").read_text(encoding="utf-8"))
    models = {m["name"]: m for m in comparison["models"]}
    assert set(models) == {"openai:alpha", "openai:beta"} and comparison["judge"] == "openai:judge"
    assert models["openai:beta"]["vs_reference_pairwise"]["overall"]["n"] == dev["pairwise_judged"]

    # a repeated run (as after a kill) sends nothing to any server
    sent = [len(s.requests) for s in servers]
    result = run_cli(*run_args(beta, referee, second, "--set", f"reference_run={first}", "--overwrite"))
    assert result.exit_code == 0, result.output
    assert [len(s.requests) for s in servers] == sent
    assert all(s.repeated() == 0 for s in servers)
    assert metrics(second)["dev"] == {**dev, "judge_generated": 0, "judge_cached": dev["judge_cached"]
                                      + dev["judge_generated"]}
