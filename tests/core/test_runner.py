"""Runner details: settings precedence and sources, decode settings, prediction checks."""

from __future__ import annotations

import dataclasses
import json

import pytest

import clue_example_plugin.hooks as example_hooks
from clue_core.errors import PluginError
from clue_core.plugin import Prediction, Setting, hookimpl
from clue_core.runner import RunRequest, resolve_settings
from clue_core.specs import ModelSpec

SEEN_SETTINGS: list[dict] = []


def flip_decode(examples, predictions, settings):
    """A decode step that records the settings it received and relabels every prediction."""
    SEEN_SETTINGS.append(dict(settings))
    return [Prediction(p.id, settings["forced_label"]) for p in predictions]


def dropping_decode(examples, predictions):
    return predictions[:-1]


FORCED = Setting("forced_label", str, "negative", "label every prediction gets", choices=("negative", "positive"))


def task_with(**changes):
    return dataclasses.replace(example_hooks.clue_tasks()[0], name="decoded", **changes)


def test_decode_receives_only_its_own_settings(run_cli, isolated_kernel, tmp_path):
    class Plugin:
        @hookimpl
        def clue_tasks(self):
            return [task_with(decode=flip_decode, decode_settings=(FORCED,))]

    isolated_kernel.register(Plugin(), "decoding-plugin")
    SEEN_SETTINGS.clear()
    result = run_cli("run", "decoded", "--model", "baseline", "--sample", "-o", tmp_path, "--set",
                     "forced_label=positive", kernel=isolated_kernel)
    assert result.exit_code == 0, result.output
    assert SEEN_SETTINGS and all(s == {"forced_label": "positive"} for s in SEEN_SETTINGS)
    lines = (tmp_path / "decoded" / "submission" / "review_sentiment_predict.json").read_text().splitlines()
    assert {json.loads(line)["label"] for line in lines} == {"positive"}
    bad = run_cli("run", "decoded", "--model", "baseline", "--sample", "-o", tmp_path / "bad", "--set",
                  "forced_label=neutral", kernel=isolated_kernel)
    assert bad.exit_code == 2 and "setting 'forced_label' (--set): expected one of 'negative', 'positive'" in bad.output
    assert not (tmp_path / "bad").exists()


def test_a_decode_step_that_loses_predictions_is_a_plugin_error(run_cli, isolated_kernel, tmp_path):
    class Plugin:
        @hookimpl
        def clue_tasks(self):
            return [task_with(decode="tests.core.test_runner:dropping_decode")]

    isolated_kernel.register(Plugin(), "dropping-plugin")
    with pytest.raises(PluginError, match="no prediction for example id"):
        run_cli("--strict", "run", "decoded", "--model", "baseline", "--sample", "-o", tmp_path,
                kernel=isolated_kernel)
    result = run_cli("run", "decoded", "--model", "baseline", "--sample", "-o", tmp_path / "b",
                     kernel=isolated_kernel)
    assert result.exit_code == 2 and "no prediction for example id" in result.output
    assert not (tmp_path / "b").exists()  # a failed run leaves nothing that blocks the retry


def settings_of(name: str, default, **flags) -> Setting:
    return Setting(name, type(default), default, f"{name} help", **flags)


MODEL = ModelSpec(
    "m", "x:y", ("classification",), "d", family=True,
    settings=(settings_of("learning_rate", 0.5), settings_of("epochs", 1), settings_of("batch_size", 1),
              settings_of("max_length", 1), settings_of("warmup_ratio", 0.0)),
    recommendations={"*": {"learning_rate": 2.0, "epochs": 2}, "classification": {"epochs": 3, "batch_size": 3}},
    recipes={"decoded": {"batch_size": 4}},
)


def test_settings_precedence_and_sources(isolated_kernel):
    task = task_with(recommendations={"learning_rate": 1.0, "epochs": 1, "batch_size": 1, "max_length": 1,
                                      "warmup_ratio": 0.1, "not_declared_anywhere": 5},
                     model_recommendations={"m": {"warmup_ratio": 0.2}})
    request = RunRequest(tasks=["decoded"], model="m:x", seed=9, settings={"max_length": 5},
                         task_settings={"decoded": {"max_length": "6"}}, overrides={"learning_rate": "7e0"},
                         config_file="run.toml")
    resolved = resolve_settings(isolated_kernel, request, [task], MODEL)["decoded"]
    assert resolved.values == {"learning_rate": 7.0, "epochs": 3, "batch_size": 4, "max_length": 6,
                               "warmup_ratio": 0.2}
    assert resolved.sources == {
        "learning_rate": "--set", "epochs": "model m (classification)", "batch_size": "model m recipe for decoded",
        "max_length": "config file run.toml [task.decoded]", "warmup_ratio": "task decoded for m"}
    # the task's recommendation reaches no model that does not declare the setting
    assert "not_declared_anywhere" not in resolved.values


@pytest.mark.parametrize(
    ("where", "message"),
    [
        ({"overrides": {"lerning_rate": "1e-4"}},
         "unknown setting 'lerning_rate' (--set); did you mean 'learning_rate'?"),
        ({"settings": {"lerning_rate": 1e-4}}, "unknown setting 'lerning_rate' (config file run.toml [settings])"),
        ({"task_settings": {"decoded": {"epoks": 2}}}, "unknown setting 'epoks' (config file run.toml [task.decoded])"),
        ({"overrides": {"seed": "7"}}, "'seed' (--set) is run control, not a setting: use --seed"),
        ({"overrides": {"epochs": "two"}}, "setting 'epochs' (--set): expected an integer, got 'two'"),
        ({"settings": {"learning_rate": True}},
         "setting 'learning_rate' (config file run.toml [settings]): expected a number"),
        ({"task_settings": {"afqmc": {"epochs": 2}}}, "[task.afqmc] names a task that is not in this run"),
    ],
)
def test_user_mistakes_are_one_clear_error(isolated_kernel, where, message):
    from clue_core.errors import ClueError

    request = RunRequest(tasks=["decoded"], model="m:x", config_file="run.toml", **where)
    with pytest.raises(ClueError) as caught:
        resolve_settings(isolated_kernel, request, [task_with()], MODEL)
    assert message in str(caught.value)


def test_a_key_some_task_of_a_multi_task_run_reads_reaches_only_that_task(isolated_kernel):
    reader_task = task_with(decode=flip_decode, decode_settings=(FORCED,))
    other = dataclasses.replace(task_with(), name="other")
    request = RunRequest(tasks=["decoded", "other"], model="m:x", overrides={"forced_label": "positive"})
    resolved = resolve_settings(isolated_kernel, request, [reader_task, other], MODEL)
    assert resolved["decoded"].values["forced_label"] == "positive"
    assert "forced_label" not in resolved["other"].values


def refusing_factory(argument, task, settings):
    from clue_core.errors import ClueError

    raise ClueError("mixed_precision=fp16 needs a GPU")


def test_a_model_refusing_its_settings_leaves_no_run_directory(run_cli, isolated_kernel, tmp_path):
    class Plugin:
        @hookimpl
        def clue_tasks(self):
            return [task_with()]

        @hookimpl
        def clue_models(self):
            return [ModelSpec("picky", "tests.core.test_runner:refusing_factory", ("classification",), "refuses")]

    isolated_kernel.register(Plugin(), "picky-plugin")
    result = run_cli("run", "decoded", "--model", "picky", "--sample", "-o", tmp_path / "out", kernel=isolated_kernel)
    assert result.exit_code == 2 and "needs a GPU" in result.output
    assert not (tmp_path / "out").exists()
