"""NaN and infinity never reach a run's files (issue 18 review): a model score that is not finite is
one line naming the task and example, and the JSON writers refuse such a value instead of writing a
file that strict JSON readers (browsers, jq) cannot open."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from clue_builtin.baseline import BaselineLearner
from clue_core.atomic import write_json, write_jsonl
from clue_core.errors import ClueError
from clue_core.kernel import Kernel
from clue_core.plugin import Prediction, hookimpl
from clue_core.specs import ModelSpec, TaskSpec


class NaNScorer(BaselineLearner):
    """The baseline, whose scores for the third example are NaN (what a broken log-softmax gives)."""

    def predict(self, examples: Sequence[Any]) -> list[Prediction]:
        predictions = super().predict(examples)
        scores = [(0.2, 0.8)] * len(predictions)
        scores[2] = (math.nan, 0.5)
        return [Prediction(p.id, p.value, scores=s) for p, s in zip(predictions, scores)]


def create(argument: str | None, task: TaskSpec, settings: Mapping[str, Any]) -> NaNScorer:
    return NaNScorer(task.name, task.kind, task.labels)


class Plugin:
    @hookimpl
    def clue_models(self) -> list[ModelSpec]:
        return [ModelSpec("nan-scorer", "tests.core.test_finite_values:create", ("classification",), "NaN scores")]


def test_a_score_that_is_not_finite_is_one_line_naming_the_example(run_cli, isolated_kernel: Kernel, tmp_path):
    import clue_example_plugin.hooks as example_hooks

    isolated_kernel.register(example_hooks, "example")
    isolated_kernel.register(Plugin(), "nan")
    result = run_cli("run", "review-sentiment", "--model", "nan-scorer", "--sample", "-o", tmp_path / "out",
                     kernel=isolated_kernel)
    assert result.exit_code == 2, result.output
    last = result.output.strip().splitlines()[-1]
    assert last.startswith("error: review-sentiment: the model's scores for example ") and "hold nan" in last
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_the_json_writers_refuse_values_json_cannot_hold(tmp_path, value):
    (tmp_path / "m.json").write_text("the user's\n")
    with pytest.raises(ClueError, match=r"m.json: holds a value that is not a finite number"):
        write_json(tmp_path / "m.json", {"dev": {"accuracy": value}})
    with pytest.raises(ClueError, match=r"p.jsonl: holds a value that is not a finite number"):
        write_jsonl(tmp_path / "p.jsonl", [{"id": 1, "scores": [0.5]}, {"id": 2, "scores": [value]}])
    assert (tmp_path / "m.json").read_text() == "the user's\n"  # nothing replaced
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.json"]  # no temporary left
