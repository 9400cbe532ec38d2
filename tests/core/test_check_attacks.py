"""``clue-core check`` attacked: first-party tasks with some model plugins missing, typos of short and long
names, recommendations for models that are not installed or do not read them, ``judge.*`` keys, exit
codes, and one line per problem.

A typo is a key a keystroke or two from a declared name (one for names of four characters or
fewer); a longer name that merely shares words with a declared one (``batch_size`` and
``eval_batch_size``) is a different setting that a plugin which is not installed may read.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from clue_builtin.deep_checks import recommendation_problems
from clue_core.errors import ClueError
from clue_core.kernel import Kernel
from clue_core.settings import keystrokes, typos
from tests.core.test_check_recommendations import TRAINER, Plugin

MODEL_PLUGINS = ("clue-models-hf", "clue-models-llm")


def first_party(kernel: Kernel) -> list[Any]:
    return [t for t in kernel.tasks.values() if kernel.owner.get(("tasks", t.name), "").startswith("clue-")]


def errors(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("error: ")]


def test_check_passes_every_first_party_task(run_cli) -> None:
    kernel = Kernel(strict=False, disabled=())
    result = run_cli("check", *[t.name for t in first_party(kernel)], kernel=kernel)
    assert result.exit_code == 0, result.output
    assert errors(result.output) == [] and "warning" not in result.output
    assert all(f"{t.name}: ok" in result.output for t in first_party(kernel))


@pytest.mark.parametrize("missing", [*MODEL_PLUGINS, ",".join(MODEL_PLUGINS)])
def test_a_first_party_task_never_fails_check_for_a_model_plugin_not_installed(missing) -> None:
    """Without clue-models-hf, the tasks' ``batch_size`` is no typo of clue-models-llm's ``eval_batch_size``:
    it is clue-models-hf's own setting, a warning at most."""
    kernel = Kernel(strict=False, disabled=set(missing.split(",")))
    for task in first_party(kernel):
        said: list[str] = []
        assert recommendation_problems(kernel, task, said.append) == [], task.name
        assert all(": warning: " in line for line in said)


def test_a_task_whose_model_plugin_is_missing_checks_ok_on_the_command_line(run_cli) -> None:
    kernel = Kernel(strict=False, disabled={"clue-models-hf"})
    result = run_cli("check", "afqmc", "cmrc2018", kernel=kernel)
    assert result.exit_code == 0, result.output
    assert "afqmc: ok" in result.output and "cmrc2018: ok" in result.output and errors(result.output) == []
    assert "set 'batch_size', which neither the task nor any installed model declares (no run reads it)" \
        in result.output


@pytest.mark.parametrize(("word", "known", "expected"), [
    ("learnig_rate", {"learning_rate"}, ["learning_rate"]),
    ("jugde", {"judge"}, ["judge"]),  # two letters swapped: one keystroke
    ("mdoe", {"mode", "model"}, ["mode"]),
    ("stpo", {"stop"}, ["stop"]),
    ("chta", {"chat"}, ["chat"]),
    ("batch_size", {"eval_batch_size"}, []),
    ("learning_rate", {"learning_rate_scale"}, []),
    ("concurrency", {"currency"}, []),
    ("mode", {"score"}, []),
    ("rpm", {"rpms", "top"}, ["rpms"]),
    ("shot", {"stop"}, []),  # two keystrokes on a four-letter word: a different word
])
def test_typos_are_a_keystroke_or_two_away(word, known, expected) -> None:
    assert typos(word, known) == expected


def test_keystrokes_counts_edits_and_swaps() -> None:
    assert keystrokes("judge", "jugde", 2) == 1
    assert keystrokes("abc", "abc", 2) == 0
    assert keystrokes("kitten", "sitting", 3) == 3
    assert keystrokes("a", "abcd", 2) == 3  # the lengths alone say more than the limit


class ThirdParty(Plugin):
    """A third-party task plugin installed next to every first-party plugin."""


def real_kernel_with(plugin: Plugin, disabled: frozenset[str] = frozenset()) -> Kernel:
    kernel = Kernel(strict=False, disabled=set(disabled))
    kernel.register(plugin, "third-party")
    return kernel


@pytest.mark.parametrize(("key", "meant"), [
    ("mdoe", "mode"), ("max_new_token", "max_new_tokens"), ("temprature", "temperature"),
    ("learnig_rate", "learning_rate"), ("judge.max_new_token", "judge.max_new_tokens"),
    ("judge.mdoe", "judge.mode"), ("jugde.stop", "judge.stop"),
])
def test_a_third_party_typo_fails_check_with_a_did_you_mean(run_cli, key, meant) -> None:
    kernel = real_kernel_with(ThirdParty({key: 1}, models=()))
    result = run_cli("check", "advised", kernel=kernel)
    assert result.exit_code == 2, result.output
    assert "advised: 1 problem(s)" in result.output
    assert errors(result.output) == [
        f"error: advised: its recommendations set {key!r}, which neither the task nor any installed model "
        f"declares; did you mean {meant!r}?"]


def test_a_key_read_by_an_installed_model_or_the_judge_passes(run_cli) -> None:
    kernel = real_kernel_with(ThirdParty({"max_new_tokens": 8, "learning_rate": 1e-4, "judge.temperature": 0.0},
                                         models=()))
    result = run_cli("check", "advised", kernel=kernel)
    assert result.exit_code == 0, result.output
    assert "advised: ok" in result.output and "warning" not in result.output


def test_judge_keys_without_the_llm_plugin_are_warnings(run_cli) -> None:
    kernel = real_kernel_with(ThirdParty({"judge.max_new_tokens": 8, "judge.mode": "generate"}, models=()),
                              frozenset({"clue-models-llm"}))
    result = run_cli("check", "advised", kernel=kernel)
    assert result.exit_code == 0, result.output
    assert errors(result.output) == []
    assert "set 'judge.max_new_tokens', which neither the task nor any installed model declares" in result.output


@pytest.mark.parametrize("name", ["sglang", "sglang:Qwen/Qwen3-8B"])
def test_model_recommendations_for_a_family_not_installed_are_warnings_even_with_a_typo(run_cli, name) -> None:
    """What a model that is not installed declares is unknown: its keys, a near-miss included, warn."""
    plugin = ThirdParty(model_recommendations={name: {"temprature": 0.1, "gpu_memory_utilization": 0.9}},
                        models=())
    result = run_cli("check", "advised", kernel=real_kernel_with(plugin))
    assert result.exit_code == 0, result.output
    assert "advised: ok" in result.output and errors(result.output) == []
    warnings = [line for line in result.output.splitlines() if ": warning: " in line]
    assert warnings == [
        f"advised: warning: its model_recommendations for {name!r} set 'temprature', which neither the task nor "
        f"any installed model declares; did you mean 'temperature'? (model {name} is not installed)",
        f"advised: warning: model_recommendations for {name!r}: no such model is installed (not used)"]


def test_run_control_for_a_model_not_installed_is_still_a_problem(run_cli) -> None:
    plugin = ThirdParty(model_recommendations={"sglang": {"seed": 1}}, models=())
    result = run_cli("check", "advised", kernel=real_kernel_with(plugin))
    assert result.exit_code == 2, result.output
    assert len(errors(result.output)) == 1 and "'seed', which is run control" in result.output


def test_a_value_for_a_model_that_does_not_read_it_is_named(run_cli) -> None:
    """llm-tiny reads no learning rate (clue-models-hf does): every llm-tiny run drops that value."""
    plugin = ThirdParty(model_recommendations={"llm-tiny": {"learning_rate": 1e-5, "max_new_tokens": 8}},
                        models=())
    result = run_cli("check", "advised", kernel=real_kernel_with(plugin))
    assert result.exit_code == 0, result.output
    assert ("advised: warning: its model_recommendations for 'llm-tiny' set 'learning_rate', which model llm-tiny "
            "does not declare (its runs drop it)") in result.output
    assert "max_new_tokens" not in result.output


def test_a_models_own_recommendation_for_a_setting_it_does_not_read_is_named(isolated_kernel) -> None:
    other = dataclasses.replace(TRAINER, name="reader", settings=(), recommendations={"*": {"learning_rate": 1.0}})
    isolated_kernel.register(Plugin(models=(TRAINER, other)), "advice")
    said: list[str] = []
    assert recommendation_problems(isolated_kernel, isolated_kernel.task("advised"), said.append) == []
    assert said == ["advised: warning: model reader's recommendations for '*' set 'learning_rate', which model "
                    "reader does not declare (its runs drop it)"]


def broken_reader(task: Any, data_dir: Any, split: str) -> Any:
    raise ClueError(f"{split}.json is not what it seems:\nline 3 is cut short")


def test_each_problem_is_one_line_and_the_exit_code_says_there_were_problems(run_cli, isolated_kernel) -> None:
    plugin = Plugin({"learnig_rate": 1.0, "temprature": 0.5})
    plugin.task = dataclasses.replace(plugin.task, reader=f"{__name__}:broken_reader")
    isolated_kernel.register(plugin, "advice")
    result = run_cli("check", "advised", kernel=isolated_kernel)
    assert result.exit_code == 2, result.output
    assert "advised: 4 problem(s)" in result.output
    found = errors(result.output)
    assert len(found) == 4, result.output
    assert "error: advised: train.json is not what it seems: line 3 is cut short" in found
    assert "error: advised: dev.json is not what it seems: line 3 is cut short" in found
    assert "line 3" not in result.output.replace("seems: line 3", "")  # never on a line of its own
