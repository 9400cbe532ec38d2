"""A hostile plugin's commands and sections against the kernel and ``clue-core``'s group: a command
module that exits on import, shell completion over a broken command, a long help, a click group
as a command, two plugins claiming one report.json key."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from clue_builtin import commands as builtin_commands
from clue_builtin import hooks as builtin
from clue_core.cli import cli
from clue_core.kernel import Kernel
from clue_core.plugin import CommandSpec, ReportSectionSpec, hookimpl

MODULE = __name__


@click.group()
def tools() -> None:
    """Tools of a plugin."""


@tools.command()
def ping() -> None:
    """Answer pong."""
    click.echo("pong")


@click.command()
def fine() -> None:
    """A working command."""
    click.echo("fine")


class Commands:
    def __init__(self, *specs: CommandSpec) -> None:
        self.specs = list(specs)

    @hookimpl
    def clue_commands(self) -> list[CommandSpec]:
        return self.specs


class Sections:
    def __init__(self, *specs: ReportSectionSpec) -> None:
        self.specs = list(specs)

    @hookimpl
    def clue_report_sections(self) -> list[ReportSectionSpec]:
        return self.specs


def _kernel(*plugins: tuple[object, str], strict: bool = False) -> Kernel:
    kernel = Kernel(entrypoints=False, strict=strict, disabled=())
    kernel.register(builtin, "builtin", distribution="clue-core")
    for plugin, name in plugins:
        kernel.register(plugin, name)
    return kernel


@pytest.fixture
def exiting_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A module that calls ``sys.exit(3)`` when imported."""
    name = "clue_attack_exits_on_import"
    (tmp_path / f"{name}.py").write_text(textwrap.dedent("""
        import sys
        sys.exit(3)
    """), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, name, raising=False)
    return name


def test_a_command_module_that_exits_on_import_is_one_line(run_cli, exiting_module: str) -> None:
    kernel = _kernel((Commands(CommandSpec("quits", "Exits on import.", f"{exiting_module}:cmd")), "quitter"))
    result = run_cli("quits", kernel=kernel)
    assert result.exit_code == 2, result.output
    assert result.output == (f"error: plugin quitter: command 'quits' could not be loaded from {exiting_module}:cmd "
                             f"(SystemExit: 3)\n")


def _complete(kernel: Kernel, words: str = "clue-core ") -> tuple[int, str]:
    result = CliRunner().invoke(cli, [], obj={"kernel": kernel}, prog_name="clue-core", catch_exceptions=True,
                                env={"_CLUE_CORE_COMPLETE": "bash_complete", "COMP_WORDS": words,
                                     "COMP_CWORD": str(len(words.split(" ")) - 1)})
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    return result.exit_code, result.output


def test_shell_completion_skips_a_broken_plugin_command() -> None:
    kernel = _kernel((Commands(CommandSpec("broken", "Cannot import.", "clue_attack_no_such_module:cmd"),
                               CommandSpec("fine", "Works.", f"{MODULE}:fine")), "mixed"))
    code, output = _complete(kernel)
    assert code == 0
    offered = [line.split(",")[1] for line in output.splitlines()]
    assert "fine" in offered and "run" in offered and "broken" not in offered


def test_shell_completion_skips_a_reference_that_is_not_a_command() -> None:
    kernel = _kernel((Commands(CommandSpec("odd", "Not a command.", f"{MODULE}:MODULE")), "odd"))
    code, output = _complete(kernel)
    assert code == 0 and "plain,list" in output and "odd" not in output


def test_a_long_plugin_help_is_at_most_two_help_lines_with_its_plugin(run_cli) -> None:
    long_help = "Draw every chart there is.\n\n" * 20
    kernel = _kernel((Commands(CommandSpec("charts", long_help, f"{MODULE}:fine")), "painter"))
    lines = run_cli("--help", kernel=kernel).output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip().startswith("charts"))
    assert lines[start + 1].endswith("... (plugin painter)")
    assert lines[start + 2].strip().split()[0] == "check"  # the next command: no third line
    assert all(len(line) <= 80 for line in lines)


def test_built_in_help_lines_are_as_long_as_click_makes_them(run_cli) -> None:
    output = run_cli("--help", kernel=_kernel()).output
    check = next(line for line in output.splitlines() if line.strip().startswith("check"))
    limit = 80 - 6 - len("download")  # click: the width less its spacing and the longest name
    assert check.split(None, 1)[1] == builtin_commands.check.get_short_help_str(limit)


def test_a_click_group_works_as_a_plugin_command(run_cli) -> None:
    kernel = _kernel((Commands(CommandSpec("tools", "Plugin tools.", f"{MODULE}:tools")), "toolbox"))
    assert run_cli("tools", "ping", kernel=kernel).output == "pong\n"
    helped = run_cli("tools", "--help", kernel=kernel)
    assert helped.exit_code == 0 and "ping" in helped.output and "Answer pong." in helped.output


@pytest.mark.parametrize("name", ["Report", "报告"])
def test_uppercase_and_unicode_command_names_run(run_cli, name: str) -> None:
    kernel = _kernel((Commands(CommandSpec(name, "Named oddly.", f"{MODULE}:fine")), "odd-names"))
    assert run_cli(name, kernel=kernel).output == "fine\n"
    assert run_cli("report", kernel=kernel).exit_code == 2  # 'Report' is not 'report'


def _section(name: str, key: str = "") -> ReportSectionSpec:
    return ReportSectionSpec(name, name.title(), "A view.", build=f"{MODULE}:fine", html=f"{MODULE}:fine", key=key,
                             inputs=(f"{name}.json",))


def test_two_plugins_with_one_report_key_error_on_the_second() -> None:
    kernel = _kernel((Sections(_section("alpha", key="shared")), "first"),
                     (Sections(_section("beta", key="shared")), "second"))
    second = next(p for p in kernel.plugins if p.name == "second")
    assert second.status == "error"
    assert "report section 'beta': key 'shared' is already used by section 'alpha' of plugin 'first'" in second.error
    assert list(kernel.report_sections) == ["alpha"]


def test_a_section_key_that_is_another_sections_name_errors_too() -> None:
    kernel = _kernel((Sections(_section("alpha")), "first"), (Sections(_section("beta", key="alpha")), "second"))
    second = next(p for p in kernel.plugins if p.name == "second")
    assert "key 'alpha' is already used by section 'alpha'" in second.error


def test_one_plugin_with_one_key_twice_is_an_error_on_its_row() -> None:
    kernel = _kernel((Sections(_section("alpha", key="k"), _section("beta", key="k")), "twice"))
    row = next(p for p in kernel.plugins if p.name == "twice")
    assert row.status == "error" and "key 'k' is used twice by this plugin" in row.error
    assert kernel.report_sections == {}


def test_list_sections_shows_a_section_whose_inputs_are_not_text(run_cli) -> None:
    odd = ReportSectionSpec("odd", "Odd", "Inputs that are not names.", build=f"{MODULE}:fine", html=f"{MODULE}:fine",
                            inputs=(1, None))  # type: ignore[arg-type]
    result = run_cli("list", "sections", kernel=_kernel((Sections(odd), "odd-inputs")))
    assert result.exit_code == 0, result.output
    assert "1, None" in result.output and "odd-inputs" in result.output


class BrokenCommands:
    @hookimpl
    def clue_commands(self) -> list[CommandSpec]:
        raise RuntimeError("the hook blew up")


def test_report_whose_plugin_failed_to_load_says_why(run_cli) -> None:
    kernel = Kernel(entrypoints=False, strict=False, disabled=())
    kernel.register(builtin, "builtin", distribution="clue-core")
    kernel.register(BrokenCommands(), "clue-report", distribution="clue-report")
    result = run_cli("report", "runs", "--help", kernel=kernel)
    assert result.exit_code == 2
    assert result.output == ("error: 'clue-core report' comes with the clue-report plugin, which failed to load: "
                             "PluginError: clue_commands() raised RuntimeError: the hook blew up\n")
    assert "report" not in run_cli("--help", kernel=kernel).output.split("Commands:")[1]
