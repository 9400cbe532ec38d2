"""Every float option of every command refuses nan, inf and -inf (``compare --tie-margin nan`` wrote NaN
into comparison.json, exit 0, and ``report`` then failed on it naming nothing)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import click
import pytest

from clue_core.cli import cli
from clue_core.errors import ClueError
from clue_core.plugin import FiniteFloat


def _commands(command: click.Command, ctx: click.Context, path: str) -> Iterator[tuple[str, click.Command]]:
    yield path, command
    if isinstance(command, click.Group):
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            if sub is not None:
                yield from _commands(sub, click.Context(sub, parent=ctx, info_name=name), f"{path} {name}".strip())


def float_options() -> list[tuple[str, str, click.ParamType]]:
    """``(command, option, type)`` of each float-typed parameter of the kernel's and the installed plugins' commands."""
    ctx = click.Context(cli, info_name="clue-core")
    found = []
    for path, command in _commands(cli, ctx, ""):
        for param in command.params:
            if isinstance(param.type, click.types.FloatParamType):
                found.append((path, param.opts[0] if param.opts else param.name or "?", param.type))
    return found


def test_every_float_option_of_every_command_is_a_finite_float() -> None:
    options = float_options()
    names = {(command, option) for command, option, _ in options}
    # the walk reaches the plugins' commands, and their groups' subcommands
    assert {("compare", "--tie-margin"), ("compare", "--elo-k"), ("corpus stats", "--eval-share")} <= names
    assert [(c, o) for c, o, kind in options if not isinstance(kind, FiniteFloat)] == []


def test_corpus_stats_refuses_a_nan_eval_share(tmp_path: Path) -> None:
    from click.testing import CliRunner

    (tmp_path / "a.txt").write_text("第一句。\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["corpus", "stats", str(tmp_path), "--eval-share", "nan"])
    assert result.exit_code == 2 and "Invalid value for '--eval-share': 'nan' is not a finite number" in result.output


def test_finite_float_keeps_the_range_and_its_help() -> None:
    @click.command()
    @click.option("--share", type=FiniteFloat(0, 0.5), default=0.01, show_default=True)
    def command(share: float) -> None:
        click.echo(repr(share))

    from click.testing import CliRunner

    runner = CliRunner()
    assert runner.invoke(command, ["--share", "0.25"]).output == "0.25\n"
    assert "is not in the range 0<=x<=0.5" in runner.invoke(command, ["--share", "0.6"]).output
    refused = runner.invoke(command, ["--share", "nan"])  # a NaN passes FloatRange's comparisons
    assert refused.exit_code == 2 and "'nan' is not a finite number" in refused.output
    assert "FLOAT" in runner.invoke(command, ["--help"]).output


@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
def test_a_float_setting_refuses_a_non_finite_value(run_cli, tmp_path: Path, value: str) -> None:
    result = run_cli("run", "afqmc", "--model", "llm-tiny", "--sample", "--set", f"temperature={value}", "--dry-run")
    assert result.exit_code == 2
    assert result.output.strip() == f"error: setting 'temperature' (--set): expected a finite number, got {value!r}"


def test_a_float_setting_in_a_config_file_refuses_nan(run_cli, tmp_path: Path) -> None:
    config = tmp_path / "run.toml"
    config.write_text('model = "llm-tiny"\n[settings]\ntemperature = nan\n', encoding="utf-8")
    result = run_cli("run", "afqmc", "--config", config, "--sample", "--dry-run")
    assert result.exit_code == 2 and "setting 'temperature'" in result.output
    assert "expected a finite number, got nan" in result.output


@pytest.mark.parametrize("value", ["nan", "inf"])
def test_a_pretrain_float_setting_refuses_a_non_finite_value(value: str) -> None:
    from clue_models_hf.pretrain_settings import resolve

    with pytest.raises(ClueError, match=rf"setting 'learning_rate' \(--set\): expected a finite number, got '{value}'"):
        resolve([f"learning_rate={value}"], tiny=True)
