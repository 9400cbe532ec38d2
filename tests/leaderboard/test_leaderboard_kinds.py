"""The leaderboard checks a file's values with the task's kind (``KindSpec.check_prediction``), so a
kind a third party brings (issue 30, step 4) is checked by ``submit`` and ``evaluate`` as the
built-in three are.

On the code as step 2 left it, ``match_entries`` branched on the built-in example classes: a value of
any other kind passed unchecked, and a tagging file with a string where its tags belong was scored
(the metric indexed the string's characters) while writing-a-plugin.md says the leaderboard's checks
ask ``check_prediction``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from clue_core import api
from clue_core.errors import InputError
from clue_core.kernel import Kernel
from clue_core.plugin import KindSpec, MetricSpec, SplitData, TaskSpec, hookimpl, iter_jsonl

TAGS = ("B", "I", "O")


@dataclass(frozen=True, slots=True)
class Tagged:
    id: int
    tokens: tuple[str, ...]
    tags: tuple[str, ...] | None = None


def gold(example: Tagged) -> list[str] | None:
    return None if example.tags is None else list(example.tags)


def check_prediction(task: TaskSpec, example: Tagged, value: object) -> str | None:
    if not isinstance(value, list) or len(value) != len(example.tokens) or not set(value) <= set(task.labels):
        return f"expected {len(example.tokens)} tags of {', '.join(task.labels)}, got {json.dumps(value)}"
    return None


def read(task: TaskSpec, data_dir: Path, split: str) -> SplitData:
    rows = [record for _, record in iter_jsonl(Path(data_dir) / f"{split}.jsonl")]
    return SplitData(tuple(Tagged(r["id"], tuple(r["text"]), tuple(r["tags"])) for r in rows))


def token_accuracy(examples, predictions) -> dict[str, float]:
    pairs = [(tag, p.value[i]) for e, p in zip(examples, predictions) for i, tag in enumerate(e.tags)]
    return {"token_accuracy": 100.0 * sum(g == p for g, p in pairs) / len(pairs)}


class _TaggingPlugin:
    @hookimpl
    def clue_kinds(self) -> list[KindSpec]:
        return [KindSpec("tagging", "one tag per character", example=f"{__name__}:Tagged",
                         prediction="a list of tags", check_prediction=f"{__name__}:check_prediction",
                         gold=f"{__name__}:gold")]

    @hookimpl
    def clue_tasks(self) -> list[TaskSpec]:
        return [TaskSpec("toy-tags", "tagging", "tag each character", f"{__name__}:read", labels=TAGS,
                         metrics=("token_accuracy",), primary_metric="token_accuracy",
                         data_files=("train.jsonl", "dev.jsonl"))]

    @hookimpl
    def clue_metrics(self) -> list[MetricSpec]:
        return [MetricSpec("token_accuracy", f"{__name__}:token_accuracy", "share of tags right",
                           kinds=("tagging",))]


@pytest.fixture
def kernel(isolated_kernel: Kernel) -> Kernel:
    isolated_kernel.register(_TaggingPlugin(), "clue-tagging")
    assert all(p.status == "ok" for p in isolated_kernel.plugins), [p.error for p in isolated_kernel.plugins]
    return isolated_kernel


@pytest.fixture
def data(tmp_path: Path) -> Path:
    folder = tmp_path / "data"
    folder.mkdir()
    for split in ("train", "dev"):
        lines = [json.dumps({"id": i, "text": text, "tags": list(tags)}, ensure_ascii=False)
                 for i, (text, tags) in enumerate([("张三来了", "BIOO"), ("来了李四", "OOBI")])]
        (folder / f"{split}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def _predictions(tmp_path: Path, *values: object) -> Path:
    path = tmp_path / "dev.jsonl"
    path.write_text("".join(json.dumps({"id": i, "prediction": v}) + "\n" for i, v in enumerate(values)),
                    encoding="utf-8")
    return path


def test_a_third_party_kinds_values_are_checked_by_its_kind(run_cli, kernel, data: Path, tmp_path: Path) -> None:
    path = _predictions(tmp_path, ["B", "I", "O", "O"], "OOBI")
    result = run_cli("evaluate", "toy-tags", path, "--data-dir", data, kernel=kernel)
    assert result.exit_code == 2 and result.output.count("\n") == 1, result.output
    assert result.output == (f"error: {path}:2: field 'prediction': expected 4 tags of B, I, O, got "
                             '"OOBI"\n')
    with pytest.raises(InputError, match=r"expected 4 tags of B, I, O, got \"OOBI\""):
        api.evaluate("toy-tags", path, data_dir=data, kernel=kernel)


def test_a_third_party_kinds_right_values_are_scored(kernel, data: Path, tmp_path: Path) -> None:
    path = _predictions(tmp_path, ["B", "I", "O", "O"], ["O", "O", "O", "O"])
    scored = api.evaluate("toy-tags", path, data_dir=data, kernel=kernel)
    assert scored == {"task": "toy-tags", "split": "dev", "examples": 2, "token_accuracy": 75.0}
