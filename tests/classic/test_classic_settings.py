"""The classic tasks' recommendations as a model that declares those settings receives them,
under a config file's ``[settings]`` and ``[task.NAME]`` tables and ``--set``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clue_core.kernel import Kernel
from clue_core.plugin import ModelSpec, Setting, hookimpl
from clue_tasks_classic import hooks

PROBE_SETTINGS = (
    Setting("batch_size", int, 8, "training batch size", minimum=1),
    Setting("learning_rate", float, 1e-3, "peak learning rate", above=0),
    Setting("max_length", int, 64, "tokens per input", minimum=8),
)


class ProbeModel:
    """A model plugin that declares three settings and never trains (only --dry-run is used)."""

    @hookimpl
    def clue_models(self) -> list[ModelSpec]:
        return [ModelSpec(name="probe", factory="tests.classic.test_classic_settings:make", kinds=("classification",),
                          description="declares batch_size, learning_rate and max_length", settings=PROBE_SETTINGS)]


def make(argument, task, settings):  # pragma: no cover - never called by a dry run
    raise AssertionError("a dry run builds no learner")


@pytest.fixture
def kernel(isolated_kernel: Kernel) -> Kernel:
    isolated_kernel.register(hooks, "clue-tasks-classic")
    isolated_kernel.register(ProbeModel(), "probe")
    assert {p.status for p in isolated_kernel.plugins} == {"ok"}, isolated_kernel.plugins
    return isolated_kernel


def _settings(run_cli, kernel: Kernel, *args: object) -> dict[str, dict[str, tuple[object, str]]]:
    result = run_cli("run", *args, "--model", "probe", "--sample", "--dry-run", "--json", kernel=kernel)
    assert result.exit_code == 0, result.output
    return {item["task"]: {row["name"]: (row["value"], row["source"]) for row in item["settings"]}
            for item in json.loads(result.output)}


def test_task_recommendations_reach_a_model_that_declares_them(run_cli, kernel: Kernel) -> None:
    got = _settings(run_cli, kernel, "cmnli", "csl", "afqmc")
    assert got["cmnli"]["batch_size"] == (64, "task cmnli")  # the CLUE baseline's bs64 for CMNLI
    assert got["cmnli"]["learning_rate"] == (3e-5, "task cmnli")
    assert got["csl"]["max_length"] == (256, "task csl")
    assert got["afqmc"]["batch_size"] == (32, "task afqmc")
    # warmup_ratio and epochs are recommended too, but a model that does not declare them never sees them
    # nor protocol: the task declares its choices (clue-core's prompt or an OpenCompass preset) for the models
    # that ask by prompt, and this one declares no such setting
    assert set(got["afqmc"]) == {"batch_size", "learning_rate", "max_length"}


def test_a_protocol_for_a_model_that_does_not_prompt_is_refused_not_ignored(run_cli, kernel: Kernel,
                                                                          tmp_path: Path) -> None:
    """`--set protocol=opencompass:…` with an encoder (or recorded answers) was accepted, shown by --dry-run and
    recorded in the manifest, and changed nothing: the model never reads it."""
    preset = "protocol=opencompass:CLUE_afqmc_gen_901306"
    for model in ("probe", "baseline"):
        result = run_cli("run", "afqmc", "--model", model, "--sample", "--dry-run", "--set", preset, kernel=kernel)
        assert result.exit_code == 2 and result.output == (
            f"error: setting 'protocol' (--set) is for the models that read it, and {model} does not: "
            f"it would change nothing in this run\n")
    config = tmp_path / "run.toml"
    config.write_text('[task.afqmc]\nprotocol = "clue-core"\n', encoding="utf-8")
    result = run_cli("run", "afqmc", "--model", "baseline", "--sample", "--dry-run", "--config", config, kernel=kernel)
    assert result.exit_code == 2 and f"setting 'protocol' (config file {config} [task.afqmc])" in result.output
    result = run_cli("run", "afqmc", "--model", "llm-tiny", "--sample", "--dry-run", "--set", preset)  # every plugin
    assert result.exit_code == 0 and "protocol = 'opencompass:CLUE_afqmc_gen_901306'  (--set)" in result.output


def test_config_settings_then_task_tables_then_set_override_the_recommendations(
    run_cli, kernel: Kernel, tmp_path: Path
) -> None:
    config = tmp_path / "run.toml"
    config.write_text("[settings]\nbatch_size = 16\nlearning_rate = 5e-5\n[task.cmnli]\nbatch_size = 128\n",
                      encoding="utf-8")
    got = _settings(run_cli, kernel, "cmnli", "afqmc", "--config", config, "--set", "learning_rate=1e-4")
    assert got["cmnli"]["batch_size"] == (128, f"config file {config} [task.cmnli]")
    assert got["afqmc"]["batch_size"] == (16, f"config file {config} [settings]")
    assert got["afqmc"]["learning_rate"] == (1e-4, "--set")
    assert got["cmnli"]["max_length"] == (128, "task cmnli")


def test_an_undeclared_setting_in_the_config_is_one_error_line(run_cli, kernel: Kernel, tmp_path: Path) -> None:
    config = tmp_path / "run.toml"
    config.write_text("[settings]\nbatch_szie = 16\n", encoding="utf-8")
    result = run_cli("run", "afqmc", "--model", "probe", "--sample", "--dry-run", "--config", config, kernel=kernel)
    assert result.exit_code == 2
    [line] = [text for text in result.output.splitlines() if text.startswith("error:")]
    assert "unknown setting 'batch_szie'" in line and "batch_size" in line
