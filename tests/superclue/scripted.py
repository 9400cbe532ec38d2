"""Test-only models with scripted behaviour: an answerer and a judge (registered in-process).

Answers carry markers the scripted judge reads back from its prompt:

* ``<<gN>>``: the judge grades the answer N (1–10) in the strict format;
* ``<<badN>>``: the judge's first output breaks the format, its answer to the repair prompt grades N;
* ``<<never>>``: the judge never answers in the format, not even after the repair prompt;
* ``<<biasA>>`` anywhere in a pairwise prompt: the judge always prefers the answer shown first.

Pairwise, the judge prefers the answer with the higher N (an answer without a marker counts 5),
平局 when equal. Every prompt the judge receives is kept in :data:`ASKED`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from clue_core.plugin import ModelSpec, Prediction, RunContext, TaskSpec, hookimpl
from clue_tasks_superclue.hooks import OPEN_QUESTION
from clue_tasks_superclue.judge_prompts import GRADE_REPAIR, PAIRWISE_HEAD, PAIRWISE_REPAIR

#: What the scripted answerer says, by question id: one text (every turn) or a list per turn;
#: a mapping {"text": ..., "calls": [...]} records tool calls for the last turn.
ANSWERS: dict[str, Any] = {}
DEFAULT_ANSWER = "<<g5>>"
#: Every turn list the scripted judge was asked, in order.
ASKED: list[tuple[str, ...]] = []
_MARK = re.compile(r"<<(g|bad)(\d+)>>|<<never>>")


def judge_output(turns: Sequence[str]) -> str:
    prompt = turns[0]
    repairing = len(turns) > 1 and turns[-1] in (GRADE_REPAIR, PAIRWISE_REPAIR)
    marks = list(_MARK.finditer(prompt))
    if prompt.startswith(PAIRWISE_HEAD):
        if "<<biasA>>" in prompt:
            return "理由：第一个回答看起来更好。\n胜者：A"
        if any(m.group(0) == "<<never>>" for m in marks):
            return "我认为两者差不多"
        if any(m.group(1) == "bad" for m in marks) and not repairing:
            return "A更好一些吧"
        shown_a, _, shown_b = prompt.partition("【助手B")
        first, second = (_grade_in(part) for part in (shown_a, shown_b))
        winner = "A" if first > second else "B" if second > first else "平局"
        return f"理由：比较了两个回答。\n胜者：{winner}"
    mark = marks[0] if marks else None
    if mark is None or mark.group(0) == "<<never>>":
        return "这个回答还可以，给7分吧。"
    if mark.group(1) == "bad" and not repairing:
        return f"评分：{mark.group(2)}\n理由：顺序写反了"
    return f"理由：按评分标准逐条核对。\n评分：{mark.group(2)}"


def _grade_in(text: str) -> int:
    """The N of the first ``<<gN>>``/``<<badN>>`` in ``text``; 5 for an answer without one."""
    found = next((m for m in _MARK.finditer(text) if m.group(2)), None)
    return int(found.group(2)) if found else 5


class ScriptedJudge:
    """Answers judge prompts as the module docstring says; ``fit`` only counts."""

    def __init__(self) -> None:
        self.fits = 0

    def fit(self, train: Sequence[Any], dev: Sequence[Any], context: RunContext) -> None:
        self.fits += 1

    def predict(self, examples: Sequence[Any]) -> list[Prediction]:
        predictions = []
        for example in examples:
            answers = []
            for turn in range(1, len(example.turns) + 1):
                ASKED.append(tuple(example.turns[:turn]))
                answers.append(judge_output(example.turns[:turn]))
            predictions.append(Prediction(example.id, answers[-1], None, {"answers": answers}))
        return predictions

    def save(self, directory: Path) -> None:
        pass

    def run_info(self) -> dict[str, Any]:
        return {"fits": self.fits}


class ScriptedAnswerer:
    """Answers open questions from :data:`ANSWERS` (``raw`` shaped as the LLM learner's)."""

    def fit(self, train: Sequence[Any], dev: Sequence[Any], context: RunContext) -> None:
        pass

    def predict(self, examples: Sequence[Any]) -> list[Prediction]:
        predictions = []
        for example in examples:
            script = ANSWERS.get(str(example.id), DEFAULT_ANSWER)
            calls = None
            if isinstance(script, Mapping):
                calls, script = script.get("calls"), script["text"]
            said = list(script) if isinstance(script, list) else [script] * len(example.turns)
            raw: dict[str, Any] = {"prompts": list(example.turns), "answers": said, "generations": said}
            if calls is not None:
                raw["tool_calls"] = [[] for _ in said[:-1]] + [list(calls)]
            predictions.append(Prediction(example.id, said[-1], None, raw))
        return predictions

    def save(self, directory: Path) -> None:
        pass


def create_judge(argument: str | None, task: TaskSpec, settings: Mapping[str, Any]) -> ScriptedJudge:
    return ScriptedJudge()


def create_answerer(argument: str | None, task: TaskSpec, settings: Mapping[str, Any]) -> ScriptedAnswerer:
    return ScriptedAnswerer()


class ScriptedModels:
    """The plugin: ``scripted-answers`` and ``scripted-rival`` (two names, one script) and ``scripted-judge``."""

    @hookimpl
    def clue_models(self) -> list[ModelSpec]:
        return [
            ModelSpec("scripted-answers", f"{__name__}:create_answerer", (OPEN_QUESTION,), "scripted answers",
                      trains=False),
            ModelSpec("scripted-rival", f"{__name__}:create_answerer", (OPEN_QUESTION,), "scripted answers too",
                      trains=False),
            ModelSpec("scripted-judge", f"{__name__}:create_judge", (OPEN_QUESTION,), "scripted judge",
                      trains=False),
        ]
