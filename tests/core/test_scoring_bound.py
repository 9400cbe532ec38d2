"""A task's scoring is bound once, before training (issue 30): the kind's spec and its check, each metric's
function and its own settings' values, the decode step. ``TaskScoring``'s methods then ask settings, specs
and kinds nothing per call, and a metric whose code does not import is its one line before the model
trains, not after an hour of training.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

import clue_example_plugin.hooks as example_hooks
from clue_builtin.baseline import BaselineLearner
from clue_core import kinds, scoring, settings
from clue_core.errors import PluginError
from clue_core.examples import ClassificationExample, Prediction
from clue_core.plugin import MetricSpec, ModelSpec, hookimpl
from clue_core.specs import TaskSpec

FITTED: list[str] = []


class Recording(BaselineLearner):
    """The baseline, noting that it was trained."""

    def fit(self, *args: Any, **kwargs: Any) -> Any:
        FITTED.append(self.task_name if hasattr(self, "task_name") else "fit")
        return super().fit(*args, **kwargs)


def create(argument: str | None, task: TaskSpec, values: dict[str, Any]) -> BaselineLearner:
    return Recording(task.name, task.kind, task.labels)


def counted(examples: Any, predictions: Any) -> dict[str, float]:
    return {"counted": float(len([p for p in predictions if p is not None]))}


class Plugin:
    """The example task scored by ``metric`` beside accuracy, and a model that notes its training."""

    def __init__(self, metric: str) -> None:
        self.task = dataclasses.replace(example_hooks.clue_tasks()[0], name="bound", test_versions=(),
                                        metrics=("accuracy", "counted"))
        self.metric = MetricSpec("counted", metric, "counts the answers", produces=("counted",))

    @hookimpl
    def clue_tasks(self) -> list[TaskSpec]:
        return [self.task]

    @hookimpl
    def clue_models(self) -> list[ModelSpec]:
        return [ModelSpec("recording", create, ("classification",), "the baseline, noting its training")]

    @hookimpl
    def clue_metrics(self) -> list[MetricSpec]:
        return [self.metric]


def test_a_metric_whose_code_does_not_import_is_one_line_before_the_model_trains(run_cli, isolated_kernel,
                                                                                 tmp_path):
    isolated_kernel.register(Plugin(f"{__name__}:no_such_function"), "bound")
    FITTED.clear()
    result = run_cli("run", "bound", "--model", "recording", "--sample", "-o", tmp_path / "out",
                     kernel=isolated_kernel)
    assert result.exit_code == 2, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert errors == ["error: metric counted raised AttributeError: module "
                      f"'{__name__}' has no attribute 'no_such_function'"], result.output
    assert "Traceback" not in result.output
    assert FITTED == [] and not (tmp_path / "out").exists()


def test_once_bound_scoring_asks_settings_specs_and_kinds_nothing(run_cli, isolated_kernel, monkeypatch,
                                                                  tmp_path):
    plugin = Plugin(f"{__name__}:counted")
    isolated_kernel.register(plugin, "bound")
    task = isolated_kernel.task("bound")
    dev = [ClassificationExample(0, "一", label=task.labels[0]), ClassificationExample(1, "二", label=task.labels[1])]
    bound = scoring.TaskScoring(isolated_kernel, task, dev, {"x": 1})

    def asked(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("looked up again after binding")

    monkeypatch.setattr(scoring, "resolve", asked)
    monkeypatch.setattr(scoring, "kind_spec", asked)
    monkeypatch.setattr(kinds, "kind_spec", asked)
    monkeypatch.setattr(settings.ResolvedSettings, "values_for", asked)
    predictions = [Prediction(0, task.labels[0]), Prediction(1, task.labels[0])]
    assert bound.score_dev(predictions) == {"accuracy": 50.0, "counted": 2.0}
    assert bound.score_dev([*predictions[:1], Prediction(1, task.labels[1])])["accuracy"] == 100.0


def test_a_kind_check_that_does_not_import_is_refused_when_bound(isolated_kernel, monkeypatch):
    isolated_kernel.register(Plugin(f"{__name__}:counted"), "bound")
    task = isolated_kernel.task("bound")
    spec = isolated_kernel.kinds[task.kind]
    monkeypatch.setitem(isolated_kernel.kinds, task.kind,
                        dataclasses.replace(spec, check_prediction=f"{__name__}:no_such_check"))
    with pytest.raises(PluginError, match=rf"^kind {task.kind}: check_prediction {__name__}:no_such_check "
                                          r"could not be loaded \("):
        scoring.TaskScoring(isolated_kernel, task, [], None)
