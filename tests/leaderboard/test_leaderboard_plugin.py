"""The leaderboard is a plugin (clue-leaderboard, issue 30 step 2): ``submit`` and ``evaluate`` arrive through
``clue_commands``, ``clue_core.api.submit``/``evaluate`` reach them through ``CommandSpec.api``, and a
machine without the plugin gets one line saying what to install, from the command line and from Python."""

from __future__ import annotations

import ast
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from clue_core import api
from clue_core.errors import ClueError, PluginError
from clue_core.kernel import BUILTIN_COMMANDS, Kernel
from clue_core.plugin import CommandSpec, hookimpl
from clue_leaderboard import hooks as leaderboard_hooks

ROOT = Path(__file__).parents[2]
PACKAGE = ROOT / "plugins" / "clue-leaderboard" / "clue_leaderboard"
INSTALL = "pip install ./plugins/clue-leaderboard"


def _without_leaderboard() -> Kernel:
    """The built-in plugin and nothing else: a machine where clue-leaderboard is not installed."""
    from clue_builtin import hooks as builtin

    kernel = Kernel(entrypoints=False, strict=False, disabled=())
    kernel.register(builtin, "builtin", distribution="clue-core")
    return kernel


def _one_line(result) -> str:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and result.output.count("\n") == 1, result.output
    return result.output.strip()


@pytest.fixture(scope="module")
def kernel() -> Kernel:
    """The installed plugins: the classic tasks and clue-leaderboard among them."""
    return Kernel(strict=False, disabled=())


@pytest.fixture
def afqmc_run(kernel, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """One complete baseline run of afqmc on the bundled sample (instant)."""
    monkeypatch.setenv("CLUE_HOME", str(tmp_path / "clue-home"))
    [record] = api.run(["afqmc"], model="baseline", sample=True, output_dir=tmp_path / "runs", kernel=kernel,
                       echo=None)
    return record.path


# -- without the plugin ------------------------------------------------------------------------


@pytest.mark.parametrize("args", [("submit", "runs", "-o", "s.zip"), ("evaluate", "afqmc", "p.json", "--sample"),
                                  ("submit", "--help"), ("evaluate",)], ids=" ".join)
def test_a_kernel_without_the_plugin_says_what_to_install(run_cli, tmp_path: Path, args) -> None:
    line = _one_line(run_cli(*args, kernel=_without_leaderboard()))
    assert line == (f"error: 'clue-core {args[0]}' comes with the clue-leaderboard plugin, which is not installed: "
                    f"{INSTALL}")
    assert not (tmp_path / "s.zip").exists()


@pytest.mark.parametrize("name", ["submit", "evaluate"])
def test_the_plugin_disabled_says_so(run_cli, monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    monkeypatch.setenv("CLUE_DISABLE_PLUGINS", "clue-leaderboard")
    line = _one_line(run_cli(name, "afqmc", "p.json", "-o", "s.zip"))  # the installed plugins, this one off
    assert line == (f"error: 'clue-core {name}' comes with the clue-leaderboard plugin, which "
                    f"CLUE_DISABLE_PLUGINS turns off")


def test_the_python_api_without_the_plugin_raises_the_same_line(tmp_path: Path) -> None:
    kernel = _without_leaderboard()
    with pytest.raises(ClueError) as submitted:
        api.submit([tmp_path], tmp_path / "s.zip", kernel=kernel)
    assert str(submitted.value) == ("'clue-core submit' comes with the clue-leaderboard plugin, which is not "
                                    f"installed: {INSTALL}")
    with pytest.raises(ClueError, match=r"^'clue-core evaluate' comes with the clue-leaderboard plugin"):
        api.evaluate("afqmc", tmp_path / "p.json", sample=True, kernel=kernel)
    assert not (tmp_path / "s.zip").exists()


def test_the_commands_are_the_plugins_not_the_kernels(run_cli, isolated_kernel) -> None:
    assert not {"submit", "evaluate"} & BUILTIN_COMMANDS
    assert not [p.name for p in (ROOT / "clue_core").glob("*.py") if p.stem in {"submission", "evaluate"}]
    assert isolated_kernel.owner[("commands", "submit")] == isolated_kernel.owner[("commands", "evaluate")] \
        == "clue-leaderboard"
    helped = " ".join(run_cli("--help", kernel=isolated_kernel).output.split())
    assert "submit Check the submission files of runs against their test files and pack them into one zip. " \
           "(plugin clue-leaderboard)" in helped
    assert "evaluate Score a PREDICTIONS file against gold labels, with no model. (plugin clue-leaderboard)" in helped


# -- through the plugin ------------------------------------------------------------------------


def test_api_submit_returns_the_checked_files_through_the_plugin(kernel, afqmc_run: Path, tmp_path: Path) -> None:
    from clue_leaderboard.submission import CheckedFile

    assert kernel.owner[("commands", "submit")] == "clue-leaderboard"
    checked = api.submit([afqmc_run], tmp_path / "s.zip", kernel=kernel)
    assert [type(c) for c in checked] == [CheckedFile]
    [row] = checked
    assert (row.task, row.version, row.name) == ("afqmc", "1.1", "afqmc_predict.json")
    assert row.path == afqmc_run / "submission" / "afqmc_predict.json"
    assert row.entries == len(row.path.read_text(encoding="utf-8").splitlines()) > 0
    with zipfile.ZipFile(tmp_path / "s.zip") as archive:
        assert archive.namelist() == ["afqmc_predict.json"]
        assert archive.read("afqmc_predict.json") == row.path.read_bytes()


def test_api_evaluate_returns_what_the_command_prints_as_json(run_cli, kernel, afqmc_run: Path) -> None:
    import json

    predictions = afqmc_run / "predictions" / "dev.jsonl"
    scored = api.evaluate("AFQMC", predictions, sample=True, kernel=kernel)
    printed = run_cli("evaluate", "afqmc", predictions, "--sample", "--json", kernel=kernel)
    assert printed.exit_code == 0, printed.output
    assert scored == json.loads(printed.output) and scored["task"] == "afqmc" and scored["examples"] > 0


# -- CommandSpec.api ----------------------------------------------------------------------------


class _Commands:
    def __init__(self, *specs: CommandSpec) -> None:
        self.specs = list(specs)

    @hookimpl
    def clue_commands(self) -> list[CommandSpec]:
        return self.specs


def test_an_api_that_is_not_a_reference_is_an_error_on_the_plugins_row() -> None:
    kernel = _without_leaderboard()
    kernel.register(_Commands(CommandSpec("submit", "Mine.", "clue_leaderboard.commands:submit", api="not a ref")),
                    "odd")
    row = next(p for p in kernel.plugins if p.name == "odd")
    assert row.status == "error" and "api must be 'module:attr', got 'not a ref'" in row.error
    assert "submit" not in kernel.commands


def test_an_api_that_does_not_import_names_its_plugin(tmp_path: Path) -> None:
    kernel = _without_leaderboard()
    kernel.register(_Commands(CommandSpec("submit", "Mine.", "clue_leaderboard.commands:submit",
                                          api="no_such_module_here:submit")), "broken")
    with pytest.raises(PluginError, match=r"^plugin broken: the Python API of command 'submit' could not be loaded "
                                          r"from no_such_module_here:submit \(ModuleNotFoundError"):
        api.submit([tmp_path], tmp_path / "s.zip", kernel=kernel)


def test_a_third_partys_submit_is_what_api_submit_calls(tmp_path: Path) -> None:
    """``api.submit`` calls whichever plugin registered ``submit`` (its ``api``), with the checked arguments."""
    kernel = _without_leaderboard()
    kernel.register(_Commands(CommandSpec("submit", "Mine.", f"{__name__}:NOT_USED", api=f"{__name__}:record")),
                    "mine")
    RECORDED.clear()
    assert api.submit(str(tmp_path), str(tmp_path / "s.zip"), force=True, kernel=kernel) == ["packed"]
    [(registry, run_dirs, output, options)] = RECORDED
    assert registry is kernel and (run_dirs, output, options) == ([tmp_path], tmp_path / "s.zip", {"force": True})


RECORDED: list[tuple] = []
NOT_USED = None


def record(kernel, run_dirs, output, **options):
    RECORDED.append((kernel, run_dirs, output, options))
    return ["packed"]


# -- the boundary -------------------------------------------------------------------------------


def test_the_plugin_imports_only_clue_core_plugin() -> None:
    wrong = []
    for path in sorted(PACKAGE.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([node.module or ""] if isinstance(node, ast.ImportFrom) else
                     [alias.name for alias in node.names] if isinstance(node, ast.Import) else [])
            for name in names:  # clue-core's public module only, and no other plugin's package
                top = name.split(".")[0]
                if (top == "clue_core" and name != "clue_core.plugin") or (
                        top.startswith("clue_") and top not in {"clue_core", "clue_leaderboard"}):
                    wrong.append(f"{path.name}: {name}")
    assert len(list(PACKAGE.glob("*.py"))) >= 4 and not wrong


def test_the_hook_module_stays_light() -> None:
    """``clue-core list`` imports the hooks: not the checks, the commands, scoring or the data lookup."""
    heavy = ("clue_leaderboard.submission", "clue_leaderboard.evaluate", "clue_leaderboard.commands",
             "clue_core.scoring", "clue_core.data", "clue_core.examples")
    code = f"import sys, clue_leaderboard.hooks; print(sorted(m for m in {heavy!r} if m in sys.modules))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert result.stdout.strip() == "[]"
    assert {spec.name for spec in leaderboard_hooks.clue_commands()} == {"submit", "evaluate"}
