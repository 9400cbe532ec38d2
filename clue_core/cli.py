"""The ``clue-core`` command line: ``run``, and the commands plugins add through the ``clue_commands``
hook — the built-in plugin's ``list``, ``info`` and ``check`` (:mod:`clue_builtin.commands`) as much
as ``download``, ``evaluate``, ``submit``, ``report`` or ``compare``.

Only click and the kernel are imported at start-up; each command imports what it needs,
so ``clue-core list`` and ``--help`` never load torch or transformers. Every
:class:`~clue_core.errors.ClueError` ends as one ``error: …`` line with exit code 2.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from clue_core import __version__
from clue_core.errors import ClueError
from clue_core.kernel import BUILTIN_PLUGIN, PLUGIN_HOMES, Kernel


class ClueGroup(click.Group):
    """Turns user-facing errors into one line and exit code 2, without a traceback, and adds the
    commands plugins register through the ``clue_commands`` hook (imported only when they run)."""

    def invoke(self, ctx: click.Context) -> Any:
        from clue_core.redaction import guarded_output  # every line printed has the run's secrets replaced

        with guarded_output():
            return self._invoke(ctx)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        # ``--help`` lists the commands while the arguments are parsed, before invoke: the kernel is built
        # there, so an installed distribution's broken entry_points.txt must be one line here too
        try:
            return super().parse_args(ctx, args)
        except ClueError as exc:
            _one_line(ctx, exc)
            raise  # _one_line exits unless strict

    def _invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except ClueError as exc:
            _one_line(ctx, exc)
            raise
        except KeyboardInterrupt:  # outside a run (which says what it kept): nothing to go on with
            click.echo("error: interrupted", err=True)
            ctx.exit(130)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *get_kernel(ctx).commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        command = super().get_command(ctx, cmd_name)
        if command is not None:
            return command
        from clue_core.commands import load_command, missing_command

        kernel = get_kernel(ctx)
        spec = kernel.commands.get(cmd_name)
        if spec is None:
            return missing_command(kernel, cmd_name, PLUGIN_HOMES.get(cmd_name))
        try:
            return load_command(kernel, spec)
        except Exception:
            if ctx.resilient_parsing:  # shell completion: a broken plugin command offers nothing, and no traceback
                return None
            raise

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """Like click's, but a plugin command shows its spec's help: listing imports none of them. The built-in
        plugin's (``list``, ``info``, ``check``) read as click's own, shortened to one line and unsigned."""
        kernel = get_kernel(ctx)
        names = [n for n in self.list_commands(ctx) if n not in self.commands or not self.commands[n].hidden]
        limit = formatter.width - 6 - max((len(name) for name in names), default=0)  # as click's own
        rows = []
        for name in names:
            if name in self.commands:
                rows.append((name, self.commands[name].get_short_help_str(limit)))
            elif (owner := kernel.owner.get(("commands", name), "?")) == BUILTIN_PLUGIN:
                rows.append((name, click.Command(name, help=kernel.commands[name].help).get_short_help_str(limit)))
            else:
                rows.append((name, _short(kernel.commands[name].help, f" (plugin {owner})", limit)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


def _short(text: object, suffix: str, limit: int) -> str:
    """A plugin command's help, then ``suffix`` (its plugin), in at most two ``--help`` lines of ``limit``
    (a built-in's takes one, as click shortens it; the plugin's name needs the room of a second)."""
    words = " ".join(str(text or "").split())
    room = max(2 * limit - len(suffix), 10)
    if len(words) > room:
        words = words[:room - 3].rsplit(" ", 1)[0].rstrip(" ,;:.") + "..."
    return words + suffix


def _one_line(ctx: click.Context, exc: ClueError) -> None:
    """A user-facing error as one ``error:`` line and its exit code; returns only under ``--strict``."""
    kernel = (ctx.obj or {}).get("kernel")
    if _strict(ctx) or (kernel is not None and kernel.strict):
        return
    from clue_core.table import printable

    click.echo(f"error: {printable(str(exc), lines=True)}", err=True)  # an ESC in a name shown as \x1b
    ctx.exit(exc.exit_code)


def _strict(ctx: click.Context) -> bool:
    root = ctx.find_root()
    return bool((root.obj or {}).get("strict") or root.params.get("strict"))


def get_kernel(ctx: click.Context) -> Kernel:
    obj = ctx.find_root().ensure_object(dict)
    if "kernel" not in obj:
        obj["kernel"] = Kernel(strict=True if _strict(ctx) else None)
    return obj["kernel"]


def echo_json(data: Any) -> None:
    import json

    click.echo(json.dumps(data, ensure_ascii=False, indent=2, default=str))


def echo_table(rows: list[list[str]]) -> None:
    from clue_core.table import format_table

    click.echo(format_table(rows))


@click.group(cls=ClueGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="clue-core")
@click.option("--strict", is_flag=True, help="Re-raise plugin errors with their traceback (CLUE_STRICT_PLUGINS=1).")
@click.pass_context
def cli(ctx: click.Context, strict: bool) -> None:
    """Fine-tune, evaluate and submit models on the CLUE benchmark."""
    obj = ctx.ensure_object(dict)
    obj["strict"] = strict or bool(obj.get("strict"))  # clue_core.api runs commands strict: errors raise


# -- run ---------------------------------------------------------------------------------


@cli.command()
@click.argument("tasks", nargs=-1, metavar="TASK…")
@click.option("--model", "-m", help="Model name, 'family:checkpoint', or a trained model directory.")
@click.option("--data-dir", type=click.Path(path_type=Path), help="Extracted official folder or zip (or a parent).")
@click.option("--sample", is_flag=True, default=None, help="Use the small sample bundled with the task plugin.")
@click.option("--output-dir", "-o", type=click.Path(path_type=Path), help="Where run directories go.")
@click.option("--seed", type=int, help="Random seed (default 42).")
@click.option("--config", "config_file", type=click.Path(path_type=Path), help="TOML or YAML run configuration.")
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE",
              help="Set a setting (see --dry-run for the settings a run reads).")
@click.option("--no-train", is_flag=True, help="Predict with an already trained model directory.")
@click.option("--resume", is_flag=True, help="Continue an interrupted run in --output-dir.")
@click.option("--overwrite", is_flag=True, help="Replace an earlier run in the same directory.")
@click.option("--limit", type=int, help="Run a seeded subset of at most N examples per split (a partial run).")
@click.option("--first", type=int, help="Run the first N examples per split in file order (a partial run, as "
              "OpenCompass's test_range takes them).")
@click.option("--splits", metavar="SPLIT[,SPLIT]", help="Predict only these: dev (always), a scored split "
              "(test_public), test (every test version). --splits dev writes no submission files.")
@click.option("--cache", "cache_dir", type=click.Path(path_type=Path),
              help="Where models cache per-example results (default $CLUE_HOME/cache).")
@click.option("--dry-run", is_flag=True, help="Show what would run, with resolved settings; write nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print results as JSON.")
@click.pass_context
def run(ctx: click.Context, tasks: tuple[str, ...], model: str | None, data_dir: Path | None, sample: bool | None,
        output_dir: Path | None, seed: int | None, config_file: Path | None, overrides: tuple[str, ...],
        no_train: bool, resume: bool, overwrite: bool, limit: int | None, first: int | None, splits: str | None,
        cache_dir: Path | None, dry_run: bool, as_json: bool) -> None:
    """Fine-tune MODEL on each TASK, score dev, and write the leaderboard files."""
    from clue_core import runner
    from clue_core.config import run_request
    from clue_core.context import is_main_process

    request = run_request(tasks=tasks, model=model, config_file=config_file, data_dir=data_dir, sample=sample,
                          output_dir=output_dir, seed=seed, overrides=overrides, no_train=no_train, resume=resume,
                          overwrite=overwrite, limit=limit, first=first, cache_dir=cache_dir, command=sys.argv[:],
                          splits=splits)
    kernel = get_kernel(ctx)
    if dry_run:
        plan = runner.dry_run_plan(kernel, request)
        if as_json:
            return echo_json(plan)
        for item in plan:
            click.echo(f"{item['task']}: model {item['model']}, data {item['data']}")
            click.echo(f"  run dir: {item['run_dir']} ({'train + predict' if item['train'] else 'predict only'})")
            click.echo(f"  seed: {item['seed']}")
            click.echo(f"  splits: {', '.join(item['splits'])}")
            click.echo(f"  submission files: {', '.join(item['submission_files']) or '-'}")
            click.echo("  settings:")
            for row in item["settings"]:
                click.echo(f"    {row['name']} = {row['value']!r}  ({row['source']})")
        return None
    results = runner.run(kernel, request, echo=lambda line: click.echo(line, err=True))
    if not is_main_process():
        return None
    if as_json:
        return echo_json([{"task": r.task, "run_dir": str(r.run_dir), "dev": r.metrics,
                           "primary_metric": r.primary_metric, "counts": r.counts,
                           "submission_files": r.submission_files, "splits": list(r.splits)} for r in results])
    echo_table(runner.results_table(results, kernel))
    return None


def main() -> None:
    cli(prog_name="clue-core")


if __name__ == "__main__":
    main()
