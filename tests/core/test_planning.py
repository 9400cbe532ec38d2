"""What a run refuses when it is planned, before any task of it is written (issue 18 M7, L4),
and the settings a model named by a setting (a judge) gets (issue 18: the slow judge)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

import clue_example_plugin.hooks as example_hooks
from clue_builtin.baseline import BaselineLearner
from clue_core.kernel import Kernel
from clue_core.plugin import ClueError, MetricSpec, Setting, hookimpl
from clue_core.runner import RunRequest, resolve_settings
from clue_core.specs import ModelSpec, TaskSpec


def score(examples, predictions, settings=None):
    return {"always": 50.0}


def refuse_missing_folder(settings: Mapping[str, Any]) -> None:
    """A metric check: the folder a setting names must not be 'missing'; says which settings it was given.

    (The runner imports this module by its dotted name, apart from pytest's copy, so what it
    saw comes back in the message.)
    """
    if settings["folder"] == "missing":
        raise ClueError(f"setting 'folder': missing is not there (given {sorted(settings)})")


class PickyLearner(BaselineLearner):
    """The baseline, but it needs three labelled training examples, as few-shot demos would."""

    def check_plan(self, splits: Mapping[str, Sequence[Any]]) -> None:
        if len(splits.get("train", ())) < 1000:
            raise ClueError(f"{self.task_name}: needs 1000 training examples (given {sorted(splits)})")


def create_picky(argument: str | None, task: TaskSpec, settings: Mapping[str, Any]) -> PickyLearner:
    return PickyLearner(task.name, task.kind, task.labels)


FOLDER = Setting("folder", str, "", "a folder the metric reads")
CHECKING_METRIC = MetricSpec("folder_metric", "tests.core.test_planning:score", "needs a folder", settings=(FOLDER,),
                             produces=("always",), check="tests.core.test_planning:refuse_missing_folder")


def _tasks(second_metric: bool) -> list[TaskSpec]:
    base = example_hooks.clue_tasks()[0]
    first = dataclasses.replace(base, name="first")
    second = dataclasses.replace(base, name="second")
    if second_metric:
        second = dataclasses.replace(second, metrics=("folder_metric",), primary_metric="always")
    return [first, second]


class Plugin:
    def __init__(self, second_metric: bool = False) -> None:
        self.second_metric = second_metric

    @hookimpl
    def clue_tasks(self) -> list[TaskSpec]:
        return _tasks(self.second_metric)

    @hookimpl
    def clue_metrics(self) -> list[MetricSpec]:
        return [CHECKING_METRIC]

    @hookimpl
    def clue_models(self) -> list[ModelSpec]:
        baseline = ModelSpec("other-baseline", "clue_builtin.baseline:create", ("classification",),
                             "the baseline under another name")
        picky = ModelSpec("picky", "tests.core.test_planning:create_picky", ("classification",),
                          "needs many training examples")
        return [baseline, picky]


@pytest.fixture
def kernel(isolated_kernel: Kernel) -> Kernel:
    isolated_kernel.register(Plugin(second_metric=True), "planning-plugin")
    return isolated_kernel


def test_a_metric_check_refuses_the_run_before_the_first_task_is_written(run_cli, kernel, tmp_path):
    result = run_cli("run", "first", "second", "--model", "baseline", "--sample", "-o", tmp_path / "out",
                     "--set", "folder=missing", kernel=kernel)
    assert result.exit_code == 2, result.output
    # the metric's own settings, nothing else
    assert result.output.strip().splitlines() == ["error: setting 'folder': missing is not there (given ['folder'])"]
    assert not (tmp_path / "out").exists()


def test_a_metric_check_runs_for_a_dry_run_and_passes_good_values(run_cli, kernel, tmp_path):
    dry = run_cli("run", "second", "--model", "baseline", "--sample", "--set", "folder=missing", "--dry-run",
                  kernel=kernel)
    assert dry.exit_code == 2 and "missing is not there" in dry.output
    good = run_cli("run", "first", "second", "--model", "baseline", "--sample", "-o", tmp_path,
                   "--set", "folder=here", kernel=kernel)
    assert good.exit_code == 0, good.output
    assert (tmp_path / "first" / "metrics.json").is_file() and (tmp_path / "second" / "metrics.json").is_file()


def test_a_learner_check_refuses_the_run_before_the_first_task_trains(run_cli, kernel, tmp_path):
    result = run_cli("run", "first", "second", "--model", "picky", "--sample", "-o", tmp_path / "out",
                     "--set", "folder=here", kernel=kernel)
    assert result.exit_code == 2, result.output
    assert result.output.strip().splitlines()[-1] == (
        "error: first: needs 1000 training examples (given ['dev', 'train'])")
    assert not (tmp_path / "out").exists()


def test_resuming_a_complete_run_with_another_model_says_so(run_cli, kernel, tmp_path):
    assert run_cli("run", "first", "--model", "baseline", "--sample", "-o", tmp_path, kernel=kernel).exit_code == 0
    before = (tmp_path / "first" / "metrics.json").read_bytes()
    same = run_cli("run", "first", "--model", "baseline", "--sample", "-o", tmp_path, "--resume", kernel=kernel)
    assert same.exit_code == 0 and "already complete; nothing to resume" in same.output
    other = run_cli("run", "first", "--model", "other-baseline", "--sample", "-o", tmp_path, "--resume",
                    kernel=kernel)
    assert other.exit_code == 2, other.output
    assert "complete run with a different model ('baseline' → 'other-baseline')" in other.output
    seed = run_cli("run", "first", "--model", "baseline", "--sample", "-o", tmp_path, "--resume", "--seed", "7",
                   kernel=kernel)
    assert seed.exit_code == 2 and "different seed (42 → 7)" in seed.output
    assert (tmp_path / "first" / "metrics.json").read_bytes() == before


# -- the judge's settings -----------------------------------------------------------------


def _judge_settings(real_kernel: Kernel, **overrides: Any) -> Any:
    request = RunRequest(tasks=["superclue"], model="llm-tiny", overrides=overrides)
    model, _ = real_kernel.model("llm-tiny")
    return resolve_settings(real_kernel, request, [real_kernel.task("superclue")], model)["superclue"]


def test_a_judge_gets_the_tasks_settings_for_that_model():
    """judge=llm-tiny gets the 32 new tokens the task recommends for llm-tiny, not 512 (a 159 s sample run)."""
    kernel = Kernel()
    settings = _judge_settings(kernel, judge="llm-tiny")
    assert settings.values["max_new_tokens"] == 32
    assert settings.values["judge.max_new_tokens"] == 32
    assert settings.sources["judge.max_new_tokens"] == "task superclue for llm-tiny, as judge"
    assert settings.values["judge.mode"] == "generate"  # the task's judge.* keys still hold
    user = _judge_settings(kernel, judge="llm-tiny", **{"judge.max_new_tokens": 8})
    assert (user.values["judge.max_new_tokens"], user.sources["judge.max_new_tokens"]) == (8, "--set")


def test_a_judge_without_task_settings_for_it_keeps_the_tasks_judge_settings():
    settings = _judge_settings(Kernel(), judge="llm:some/model")
    assert settings.values["judge.max_new_tokens"] == 512
    assert settings.sources["judge.max_new_tokens"] == "task superclue"


def test_a_judge_whose_own_settings_cannot_work_is_refused_when_planned(run_cli, tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    result = run_cli("run", "afqmc", "superclue", "--model", "llm-tiny", "--sample", "-o", tmp_path / "out",
                     "--set", "judge=openai:judge-model", kernel=Kernel())
    assert result.exit_code == 2, result.output
    assert "base_url" in result.output and len(result.output.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()
