"""A third-party task of a kind no CLUE task has (open questions) gets LLM answers through its prompt."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from clue_core.plugin import (
    MetricSpec,
    Prediction,
    Prompt,
    SplitData,
    TaskSpec,
    hookimpl,
)
from clue_tasks_superclue.examples import OpenQuestionExample
from clue_tasks_superclue.hooks import OPEN_QUESTION

pytestmark = pytest.mark.slow


def read(task: TaskSpec, data_dir: Path, split: str) -> SplitData:
    path = Path(data_dir) / f"{split}.jsonl"
    examples = tuple(OpenQuestionExample(r["id"], "常识", "地理", tuple(r["turns"]), r.get("reference"))
                     for r in map(json.loads, path.read_text(encoding="utf-8").splitlines()))
    return SplitData(examples, files=(str(path),))


def replied(examples: Sequence[OpenQuestionExample], predictions: Sequence[Prediction | None]) -> dict[str, float]:
    answered = sum(1 for p in predictions if p is not None and isinstance(p.value, str))
    return {"replied": 100.0 * answered / len(examples)}


class Dialogue:
    @hookimpl
    def clue_tasks(self) -> list[TaskSpec]:
        return [TaskSpec("toy-dialogue", OPEN_QUESTION, "two-turn questions", f"{__name__}:read",
                         metrics=("replied",), primary_metric="replied", splits=("dev",),
                         prompt=Prompt("请简短回答。", "（{category}）"))]

    @hookimpl
    def clue_metrics(self) -> list[MetricSpec]:
        return [MetricSpec("replied", f"{__name__}:replied", "share answered", kinds=(OPEN_QUESTION,),
                           produces=("replied",))]


def test_open_questions_are_answered_turn_by_turn(run_cli, tmp_path) -> None:
    from clue_core.kernel import Kernel

    kernel = Kernel()
    kernel.register(Dialogue(), "toy-dialogue")
    data = tmp_path / "toy-dialogue"
    data.mkdir()
    rows = [{"id": 1, "turns": ["中国的首都是哪里？", "那里有多少人？"], "reference": "北京"},
            {"id": 2, "turns": ["一加一等于几？"]}]
    (data / "dev.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "out"
    result = run_cli("run", "toy-dialogue", "--model", "llm-tiny", "--data-dir", data, "-o", out, "--set",
                     "max_new_tokens=6", "--set", "stop=", kernel=kernel)
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in (out / "toy-dialogue" / "predictions" / "dev.jsonl").read_text(
        encoding="utf-8").splitlines()]
    first = records[0]["raw"]
    assert len(first["prompts"]) == 2 and len(first["answers"]) == 2
    assert first["prompts"][0] == "请简短回答。\n\n（地理）\n\n问：中国的首都是哪里？\n答："
    assert first["prompts"][1].endswith(f"答：{first['answers'][0]}\n\n问：那里有多少人？\n答：")
    assert records[0]["prediction"] == first["answers"][1] and len(records[1]["raw"]["answers"]) == 1
