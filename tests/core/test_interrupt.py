"""Ctrl-C during a run: one line saying what was kept and that --resume continues it, exit 130
(it was click's bare "Aborted!" with exit 1, which left the user guessing)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from typing import Any

import clue_example_plugin.hooks as example_hooks
from clue_builtin.baseline import BaselineLearner
from clue_core.kernel import Kernel
from clue_core.plugin import hookimpl
from clue_core.specs import ModelSpec, TaskSpec

FITS = {"count": 0}


class InterruptedOnce(BaselineLearner):
    """The baseline, but the first fit of this process's second task is interrupted as Ctrl-C would."""

    def fit(self, train: Sequence[Any], dev: Sequence[Any], context: Any) -> None:
        FITS["count"] += 1
        if FITS["count"] == 2:
            raise KeyboardInterrupt
        super().fit(train, dev, context)


def create(argument: str | None, task: TaskSpec, settings: Mapping[str, Any]) -> InterruptedOnce:
    return InterruptedOnce(task.name, task.kind, task.labels)


class Plugin:
    @hookimpl
    def clue_tasks(self) -> list[TaskSpec]:
        base = example_hooks.clue_tasks()[0]
        return [dataclasses.replace(base, name="first"), dataclasses.replace(base, name="second")]

    @hookimpl
    def clue_models(self) -> list[ModelSpec]:
        return [ModelSpec("ctrl-c", "tests.core.test_interrupt:create", ("classification",), "interrupted once")]


def test_ctrl_c_keeps_the_unfinished_task_and_says_how_to_go_on(run_cli, isolated_kernel: Kernel, tmp_path):
    isolated_kernel.register(Plugin(), "interrupting")
    out = tmp_path / "out"
    result = run_cli("run", "first", "second", "--model", "ctrl-c", "--sample", "-o", out, kernel=isolated_kernel)
    assert result.exit_code == 130, result.output
    assert result.output.strip().splitlines()[-1] == (
        f"error: interrupted: second is kept unfinished in {out / '.second.staging'}; first finished before; "
        f"the same command with --resume continues it")
    assert json.loads((out / ".second.staging" / "manifest.json").read_text())["status"] == "running"
    assert (out / "first" / "metrics.json").is_file() and not (out / ".second.lock").exists()
    resumed = run_cli("run", "first", "second", "--model", "ctrl-c", "--sample", "-o", out, "--resume",
                      kernel=isolated_kernel)
    assert resumed.exit_code == 0, resumed.output
    assert (out / "second" / "metrics.json").is_file() and not (out / ".second.staging").exists()


def test_ctrl_c_outside_a_run_is_one_line(run_cli, monkeypatch):
    import clue_core.kernel

    def interrupted(*args: Any, **kwargs: Any) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(clue_core.kernel.Kernel, "__init__", interrupted)
    result = run_cli("list")
    assert result.exit_code == 130 and result.output.strip() == "error: interrupted"
