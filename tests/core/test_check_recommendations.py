"""``clue-core check`` names recommended settings that nothing installed declares (issue 19, part 5).

A run drops a plugin's value for a key that no spec of the run declares (a task's
``learning_rate`` does not reach a model without one), so a typo in a recommendation would
never be seen. ``check`` looks over every installed model: a near-miss of a declared name
fails with a did-you-mean, a key nothing near is declared is a warning (a model plugin that is
not installed may read it), and a key only some other installed model reads is fine.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

import clue_example_plugin.hooks as example_hooks
from clue_builtin.baseline import BaselineLearner
from clue_builtin.deep_checks import recommendation_problems
from clue_core.plugin import MetricSpec, ModelSpec, Setting, hookimpl
from clue_core.specs import TaskSpec


def create(argument: str | None, task: TaskSpec, settings: dict[str, Any]) -> BaselineLearner:
    return BaselineLearner(task.name, task.kind, task.labels)


def judged(examples: Any, predictions: Any, settings: dict[str, Any]) -> dict[str, float]:
    return {"judged": 0.0}


TRAINER = ModelSpec("trainer", create, ("classification",), "reads a learning rate",
                    settings=(Setting("learning_rate", float, 1e-3, "step size", above=0),
                              Setting("temperature", float, 0.0, "sampling", minimum=0)),
                    recommendations={"*": {"learning_rate": 1e-4}})
JUDGED = MetricSpec("judged", "tests.core.test_check_recommendations:judged", "needs a judge", produces=("judged",),
                    settings=(Setting("judge", str, "", "the judge", names_model=True),))


class Plugin:
    """A task whose recommendations and per-model recommendations are given per test."""

    def __init__(self, recommendations: dict[str, Any] | None = None, *,
                 model_recommendations: dict[str, dict[str, Any]] | None = None,
                 models: tuple[ModelSpec, ...] = (TRAINER,)) -> None:
        self.task = dataclasses.replace(example_hooks.clue_tasks()[0], name="advised", test_versions=(),
                                        metrics=("accuracy", "judged"),
                                        recommendations=recommendations or {},
                                        model_recommendations=model_recommendations or {})
        self.models = list(models)

    @hookimpl
    def clue_tasks(self) -> list[TaskSpec]:
        return [self.task]

    @hookimpl
    def clue_models(self) -> list[ModelSpec]:
        return self.models

    @hookimpl
    def clue_metrics(self) -> list[MetricSpec]:
        return [JUDGED]


def _check(run_cli, kernel, plugin: Plugin):
    kernel.register(plugin, "advice")
    return run_cli("check", "advised", kernel=kernel)


def test_a_typo_in_a_task_recommendation_fails_check_with_a_did_you_mean(run_cli, isolated_kernel):
    result = _check(run_cli, isolated_kernel, Plugin({"learnig_rate": 2e-5}))
    assert result.exit_code == 2, result.output
    assert "advised: 1 problem(s)" in result.output
    assert ("error: advised: its recommendations set 'learnig_rate', which neither the task nor any "
            "installed model declares; did you mean 'learning_rate'?") in result.output


def test_a_key_some_installed_model_declares_is_fine_and_the_run_still_drops_it(run_cli, isolated_kernel, tmp_path):
    result = _check(run_cli, isolated_kernel, Plugin({"learning_rate": 2e-5, "judge.temperature": 0.0}))
    assert result.exit_code == 0, result.output
    assert "advised: ok" in result.output and "warning" not in result.output
    # the baseline reads neither: the run neither fails nor passes them on
    run = run_cli("run", "advised", "--model", "baseline", "--sample", "-o", tmp_path / "out", kernel=isolated_kernel)
    assert run.exit_code == 0, run.output


def test_a_typo_under_a_judges_namespace_is_compared_with_model_settings(run_cli, isolated_kernel):
    result = _check(run_cli, isolated_kernel, Plugin({"judge.temprature": 0.0, "jugde.temperature": 0.0}))
    assert result.exit_code == 2, result.output
    assert "set 'judge.temprature', which neither the task nor any installed model declares; " \
           "did you mean 'judge.temperature'?" in result.output
    assert "set 'jugde.temperature', which neither the task nor any installed model declares; " \
           "did you mean 'judge.temperature'?" in result.output


def test_a_key_nothing_installed_comes_near_is_a_warning_not_a_failure(run_cli, isolated_kernel, tmp_path):
    result = _check(run_cli, isolated_kernel, Plugin({"max_new_tokens": 64, "judge.stop": ""}))
    assert result.exit_code == 0, result.output
    assert "advised: ok" in result.output
    assert ("advised: warning: its recommendations set 'max_new_tokens', which neither the task nor any "
            "installed model declares (no run reads it)") in result.output
    assert "set 'judge.stop'" in result.output
    run = run_cli("run", "advised", "--model", "trainer", "--sample", "-o", tmp_path / "out", kernel=isolated_kernel)
    assert run.exit_code == 0, run.output  # a recommendation nothing reads never fails a run


def test_run_control_recommended_as_a_setting_is_a_problem(run_cli, isolated_kernel):
    result = _check(run_cli, isolated_kernel, Plugin({"seed": 7}))
    assert result.exit_code == 2, result.output
    assert "its recommendations set 'seed', which is run control, not a setting (--seed N" in result.output


def test_model_recommendations_recipes_and_per_model_task_values_are_checked(isolated_kernel):
    model = dataclasses.replace(TRAINER, recommendations={"*": {"learning_rat": 1.0},
                                                          "classification": {"temperatur": 0.5}},
                                recipes={"advised": {"learning_rate_": 2.0}})
    plugin = Plugin(model_recommendations={"trainer": {"temperture": 0.1}}, models=(model,))
    isolated_kernel.register(plugin, "advice")
    problems = recommendation_problems(isolated_kernel, isolated_kernel.task("advised"))
    assert problems == [
        "its model_recommendations for 'trainer' set 'temperture', which neither the task nor any installed "
        "model declares; did you mean 'temperature'?",
        "model trainer's recommendations for '*' set 'learning_rat', which neither the task nor any installed "
        "model declares; did you mean 'learning_rate'?",
        "model trainer's recommendations for 'classification' set 'temperatur', which neither the task nor any "
        "installed model declares; did you mean 'temperature'?",
        "model trainer's recipe for it set 'learning_rate_', which neither the task nor any installed model "
        "declares; did you mean 'learning_rate'?",
    ]


def test_a_model_that_cannot_answer_the_task_does_not_advise_it(isolated_kernel):
    other = dataclasses.replace(TRAINER, name="spanner", kinds=("span",), recommendations={"*": {"learnig_rate": 1}})
    isolated_kernel.register(Plugin(models=(TRAINER, other)), "advice")
    assert recommendation_problems(isolated_kernel, isolated_kernel.task("advised")) == []


@pytest.mark.parametrize("name", ["missing-model", "missing-family:checkpoint"])
def test_model_recommendations_for_a_model_not_installed_is_a_warning(isolated_kernel, name):
    isolated_kernel.register(Plugin(model_recommendations={name: {"learning_rate": 1.0}}), "advice")
    said: list[str] = []
    assert recommendation_problems(isolated_kernel, isolated_kernel.task("advised"), said.append) == []
    assert said == [f"advised: warning: model_recommendations for {name!r}: no such model is installed (not used)"]


def test_first_party_plugins_recommend_nothing_undeclared():
    """With every first-party plugin installed, each recommended key is read by some model."""
    from clue_core.kernel import Kernel

    kernel = Kernel(strict=False, disabled=())
    said: list[str] = []
    first_party = [t for t in kernel.tasks.values() if kernel.owner.get(("tasks", t.name), "").startswith("clue-")]
    assert first_party
    for task in first_party:
        assert recommendation_problems(kernel, task, said.append) == [], task.name
    assert said == []
