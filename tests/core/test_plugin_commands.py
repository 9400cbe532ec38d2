"""The ``clue_commands`` and ``clue_report_sections`` hooks: plugin commands arrive lazily,
clashes land on the plugin's row, and a command whose plugin is absent says what to install."""

from __future__ import annotations

import sys

import click
import pytest

from clue_core.kernel import BUILTIN_COMMANDS, Kernel
from clue_core.plugin import CommandSpec, ReportSectionSpec, hookimpl

MODULE = __name__


@click.command()
@click.argument("who", default="world")
def hello(who: str) -> None:
    """Say hello."""
    click.echo(f"hello {who}")


NOT_A_COMMAND = 42


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


def _kernel(*plugins: tuple[object, str]) -> Kernel:
    from clue_builtin import hooks as builtin

    kernel = Kernel(entrypoints=False, strict=False, disabled=())
    kernel.register(builtin, "builtin", distribution="clue-core")
    for plugin, name in plugins:
        kernel.register(plugin, name)
    return kernel


def test_plugin_command_runs_and_is_listed_in_help(run_cli) -> None:
    kernel = _kernel((Commands(CommandSpec("hello", "Greet someone.", f"{MODULE}:hello")), "greeter"))
    result = run_cli("hello", "clue", kernel=kernel)
    assert result.exit_code == 0, result.output
    assert result.output == "hello clue\n"
    helped = run_cli("--help", kernel=kernel)
    assert "hello" in helped.output and "Greet someone. (plugin greeter)" in helped.output
    listed = run_cli("list", "commands", kernel=kernel)
    assert "greeter" in listed.output and "Greet someone." in listed.output


def test_help_does_not_import_a_plugin_command(run_cli) -> None:
    kernel = _kernel((Commands(CommandSpec("later", "Imported when run.", "tests_lazy_cmd_module:cmd")), "lazy"))
    assert run_cli("--help", kernel=kernel).exit_code == 0
    assert "tests_lazy_cmd_module" not in sys.modules
    result = run_cli("later", kernel=kernel)
    assert result.exit_code == 2
    assert "plugin lazy: command 'later' could not be loaded from tests_lazy_cmd_module:cmd" in result.output
    assert "Traceback" not in result.output


def test_reference_that_is_not_a_command_is_one_line(run_cli) -> None:
    kernel = _kernel((Commands(CommandSpec("odd", "Not a command.", f"{MODULE}:NOT_A_COMMAND")), "odd"))
    result = run_cli("odd", kernel=kernel)
    assert result.exit_code == 2
    assert result.output.strip() == f"error: plugin odd: {MODULE}:NOT_A_COMMAND is a int, not a click command"


@pytest.mark.parametrize("name", sorted(BUILTIN_COMMANDS))
def test_command_named_like_a_builtin_is_an_error_on_its_row(name: str) -> None:
    kernel = _kernel((Commands(CommandSpec(name, "Clash.", f"{MODULE}:hello")), "clasher"))
    row = next(p for p in kernel.plugins if p.name == "clasher")
    assert row.status == "error" and f"command {name!r} is a built-in command of clue-core" in row.error
    assert kernel.owner.get(("commands", name)) in {None, "builtin"}  # list, info, check: the built-in plugin's


def test_two_plugins_with_one_command_name_error_on_the_second() -> None:
    spec = CommandSpec("hello", "Greet.", f"{MODULE}:hello")
    kernel = _kernel((Commands(spec), "first"), (Commands(spec), "second"))
    second = next(p for p in kernel.plugins if p.name == "second")
    assert second.status == "error" and "command 'hello' is already registered by plugin 'first'" in second.error
    assert kernel.owner[("commands", "hello")] == "first"


def test_builtin_command_names_match_the_cli() -> None:
    """The reserved names are the CLI's own (``run``) and the built-in plugin's (``list``, ``info``, ``check``)."""
    from clue_builtin import hooks as builtin
    from clue_core.cli import cli

    assert set(cli.commands) == {"run"}
    assert set(cli.commands) | {spec.name for spec in builtin.clue_commands()} == BUILTIN_COMMANDS


def test_bad_command_spec_is_dropped_with_reason() -> None:
    kernel = _kernel((Commands(CommandSpec("two words", "Bad.", "not a ref")), "bad"))
    row = next(p for p in kernel.plugins if p.name == "bad")
    assert row.status == "error"
    assert "command must be 'module:attr'" in row.error and "command name must be one word" in row.error


def test_missing_report_plugin_says_what_to_install(run_cli) -> None:
    from clue_core.commands import missing_command

    command = missing_command(_kernel(), "report", "clue-report")
    assert command is not None
    with pytest.raises(Exception) as caught:
        command.main([], standalone_mode=False)
    assert "'clue-core report' comes with the clue-report plugin, which is not installed: " \
           "pip install ./plugins/clue-report" in str(caught.value)
    assert missing_command(_kernel(), "nothing", None) is None


def test_report_section_specs_register_and_bad_ones_are_dropped(run_cli) -> None:
    good = ReportSectionSpec("extra", "Extra", "An extra view.", build=f"{MODULE}:hello", html=f"{MODULE}:hello",
                             inputs=("extra.json",))
    bad = ReportSectionSpec("bad anchor", "Bad", "Broken.", build="nope", html=f"{MODULE}:hello")
    kernel = _kernel((Sections(good), "views"), (Sections(bad), "broken"))
    assert list(kernel.report_sections) == ["extra"] and good.data_key == "extra"
    row = next(p for p in kernel.plugins if p.name == "broken")
    assert "build must be 'module:attr'" in row.error and "section name must be letters" in row.error
    listed = run_cli("list", "sections", kernel=kernel)
    assert "extra" in listed.output and "extra.json" in listed.output and "views" in listed.output
