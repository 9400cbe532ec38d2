"""Runner details: hyperparameter precedence, decode binding, prediction checks."""

from __future__ import annotations

import json

import pytest

import clue_example_plugin.hooks as example_hooks
from clue_core.errors import PluginError
from clue_core.examples import Prediction
from clue_core.hookspecs import hookimpl
from clue_core.runner import RunRequest, resolve_hyperparameters
from clue_core.specs import ModelSpec

SEEN_CONFIGS: list[dict] = []


def flip_decode(examples, predictions, config):
    """A decode step that records the config it received and relabels every prediction."""
    SEEN_CONFIGS.append(dict(config))
    return [Prediction(p.id, config["forced_label"]) for p in predictions]


def dropping_decode(examples, predictions):
    return predictions[:-1]


def task_with(**changes):
    return example_hooks.clue_tasks()[0].replace(name="decoded", **changes)


def test_decode_receives_the_run_config(run_cli, isolated_kernel, tmp_path):
    class Plugin:
        @hookimpl
        def clue_tasks(self):
            return [task_with(decode=flip_decode)]

    isolated_kernel.register(Plugin(), "decoding-plugin")
    SEEN_CONFIGS.clear()
    result = run_cli("run", "decoded", "--model", "baseline", "--sample", "-o", tmp_path, "--set",
                     'forced_label="positive"', kernel=isolated_kernel)
    assert result.exit_code == 0, result.output
    assert SEEN_CONFIGS and all(c["forced_label"] == "positive" for c in SEEN_CONFIGS)
    lines = (tmp_path / "decoded" / "submission" / "review_sentiment_predict.json").read_text().splitlines()
    assert {json.loads(line)["label"] for line in lines} == {"positive"}


def test_a_decode_step_that_loses_predictions_is_a_plugin_error(run_cli, isolated_kernel, tmp_path):
    class Plugin:
        @hookimpl
        def clue_tasks(self):
            return [task_with(decode=dropping_decode)]

    isolated_kernel.register(Plugin(), "dropping-plugin")
    with pytest.raises(PluginError, match="returned 15 predictions for 16 examples"):
        run_cli("--strict", "run", "decoded", "--model", "baseline", "--sample", "-o", tmp_path,
                kernel=isolated_kernel)
    result = run_cli("run", "decoded", "--model", "baseline", "--sample", "-o", tmp_path / "b",
                     kernel=isolated_kernel)
    assert result.exit_code == 2 and "returned 15 predictions for 16 examples" in result.output
    assert not (tmp_path / "b" / "decoded").exists()  # a failed run leaves nothing that blocks the retry


def test_hyperparameter_precedence():
    task = task_with(hyperparameters={"learning_rate": 1.0, "epochs": 1, "batch_size": 1, "max_length": 1})
    model = ModelSpec("m", "x:y", ("classification",), "d", hyperparameters={
        "learning_rate": 2.0, "epochs": 2, "by_kind": {"classification": {"epochs": 3, "batch_size": 3}},
        "by_task": {"decoded": {"batch_size": 4}}})
    request = RunRequest(tasks=["decoded"], model="m", seed=9, hyperparameters={"max_length": 5},
                         task_hyperparameters={"decoded": {"max_length": 6}}, overrides={"learning_rate": 7.0})
    merged = resolve_hyperparameters(task, model, request)
    assert (merged["learning_rate"], merged["epochs"], merged["batch_size"], merged["max_length"]) == (7.0, 3, 4, 6)
    assert merged["seed"] == 9 and merged["primary_metric"] == "accuracy" and merged["task"] == "decoded"


def refusing_factory(argument, task, options):
    from clue_core.errors import ClueError

    raise ClueError("mixed_precision=fp16 needs a GPU")


def test_a_model_refusing_its_settings_leaves_no_run_directory(run_cli, isolated_kernel, tmp_path):
    class Plugin:
        @hookimpl
        def clue_tasks(self):
            return [task_with()]

        @hookimpl
        def clue_models(self):
            return [ModelSpec("picky", refusing_factory, ("classification",), "refuses")]

    isolated_kernel.register(Plugin(), "picky-plugin")
    result = run_cli("run", "decoded", "--model", "picky", "--sample", "-o", tmp_path / "out", kernel=isolated_kernel)
    assert result.exit_code == 2 and "needs a GPU" in result.output
    assert not (tmp_path / "out").exists()
