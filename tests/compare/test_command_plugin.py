"""``clue-core compare`` is clue-tasks-superclue's command, arriving through ``clue_commands``:
the kernel has no built-in one, ``--help`` lists it without importing it, and without the plugin
the command is one line saying what to install."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from clue_core.cli import cli
from clue_core.kernel import Kernel
from tests.compare.conftest import superclue_kernel
from tests.compare.fixtures import write_run

QUESTIONS = [("q1", "计算", 8.0), ("q2", "知识百科", 6.0)]
INSTALL = "'clue-core compare' comes with the clue-tasks-superclue plugin"


def test_the_kernel_has_no_compare_of_its_own() -> None:
    assert "compare" not in cli.commands
    kernel = superclue_kernel()
    assert kernel.commands["compare"].command == "clue_tasks_superclue.compare.cli:compare"
    assert kernel.owner[("commands", "compare")] == "clue-tasks-superclue"


def test_help_lists_compare_as_the_plugins(run_cli) -> None:
    result = run_cli("--help", kernel=superclue_kernel())
    assert result.exit_code == 0, result.output
    listed = " ".join(result.output.split())  # click wraps the row
    assert "compare Compare SuperCLUE-family runs (judged or pass/fail): Bradley-Terry, Elo, points " \
           "(comparison.json) (plugin clue-tasks-superclue)" in listed


def test_the_plugins_command_keeps_its_options_and_default_task(run_cli) -> None:
    result = run_cli("compare", "--help", kernel=superclue_kernel())
    assert result.exit_code == 0, result.output
    for option in ("--reference", "--output", "--tie-margin", "--human", "--export-sheet", "--sheet-size",
                   "--seed", "--import-sheet", "--task", "--force", "--bootstrap", "--elo-orders", "--elo-k"):
        assert option in result.output
    # --task only picks a folder; the task itself is each run's metrics.json's
    assert "(default: the one of superclue, superclue-cpif there)" in " ".join(result.output.split())


def test_with_the_plugin_disabled_compare_is_one_install_line(run_cli, tmp_path: Path) -> None:
    ref, a = write_run(tmp_path / "ref", "ref", QUESTIONS), write_run(tmp_path / "a", "a", QUESTIONS)
    kernel = Kernel(disabled=("clue-tasks-superclue",))
    result = run_cli("compare", a, "--reference", ref, "-o", tmp_path / "out", kernel=kernel)
    assert result.exit_code == 2, result.output
    assert result.stderr.count("\n") == 1 and INSTALL in result.stderr and "CLUE_DISABLE_PLUGINS" in result.stderr
    assert not (tmp_path / "out").exists()


def test_clue_disable_plugins_in_a_real_process(tmp_path: Path) -> None:
    ref, a = write_run(tmp_path / "ref", "ref", QUESTIONS), write_run(tmp_path / "a", "a", QUESTIONS)
    env = {**os.environ, "CLUE_DISABLE_PLUGINS": "clue-tasks-superclue", "CLUE_HOME": str(tmp_path / "home")}
    done = subprocess.run([sys.executable, "-m", "clue_core", "compare", str(a), "--reference", str(ref), "-o",
                           str(tmp_path / "out")], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("error: ") and INSTALL in done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "out").exists()


def test_the_hook_module_imports_no_command_code() -> None:
    code = ("import sys, clue_tasks_superclue.hooks as h; h.clue_commands(); "
            "heavy = ('scipy', 'clue_tasks_superclue.compare'); "
            "loaded = [m for m in sys.modules if m.startswith(heavy)]; "
            "print(loaded)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
