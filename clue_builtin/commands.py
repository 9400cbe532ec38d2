"""``clue-core list``, ``info`` and ``check``: the built-in plugin's commands, imported only when one runs.

They come through the ``clue_commands`` hook like any plugin's (:mod:`clue_builtin.hooks` declares
them), so the kernel ships its own presentation of the registry the way it asks others to ship
theirs, and a kernel without this plugin has no ``list`` at all. Each finds the kernel in its click
context (``clue-core`` puts it there before it loads a plugin command) and reads it through
:class:`~clue_core.plugin.Registry` only.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from clue_core.plugin import ClueError, Registry, format_table

LIST_WHAT = ("plugins", "tasks", "models", "metrics", "writers", "commands", "sections", "fetchers", "kinds")


def _kernel(ctx: click.Context) -> Registry:
    kernel = (ctx.find_root().obj or {}).get("kernel")
    if kernel is None:
        raise ClueError(f"the {ctx.info_name} command runs as 'clue-core {ctx.info_name}' (it needs clue-core's "
                        f"plugin kernel)")
    return kernel


def _echo_json(data: Any) -> None:
    click.echo(json.dumps(data, ensure_ascii=False, indent=2, default=str))


@click.command("list")
@click.argument("what", type=click.Choice(LIST_WHAT), default="plugins")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_context
def list_command(ctx: click.Context, what: str, as_json: bool) -> None:
    """List plugins (default), tasks, models, metrics, submission writers, plugin commands, report sections,
    data fetchers or example kinds."""
    kernel = _kernel(ctx)
    what = "report_sections" if what == "sections" else what
    if what == "plugins":
        if as_json:
            return _echo_json([p.as_dict() for p in kernel.plugins])
        table = [["plugin", "distribution", "version", "status", "provides"]]
        for p in kernel.plugins:
            provides = "; ".join(f"{k}: {', '.join(v)}" for k, v in p.provides.items()) or "-"
            status = p.status if p.status != "error" else f"error: {p.error}"
            table.append([p.name, p.distribution or "-", p.version or "-", status, provides])
        return click.echo(format_table(table))
    from clue_builtin.describe import registry_json, registry_table

    if as_json:
        return _echo_json(registry_json(kernel, what))
    click.echo(format_table(registry_table(kernel, what)))
    return None


@click.command()
@click.argument("task_name", metavar="TASK")
@click.option("--model", "-m", help="Also show the settings a run with this model would use, and their sources.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_context
def info(ctx: click.Context, task_name: str, model: str | None, as_json: bool) -> None:
    """Show a task: kind, labels, metrics, data, submission files, settings."""
    from clue_builtin.describe import spec_dict, task_lines
    from clue_core.plugin import fetched_folder, resolved_settings

    kernel = _kernel(ctx)
    task = kernel.task(task_name)
    cached = fetched_folder(kernel, task)
    settings = resolved_settings(kernel, task, model) if model else None
    if as_json:
        return _echo_json({**spec_dict(task), "plugin": kernel.owner.get(("tasks", task.name)),
                           "cached": str(cached) if cached is not None and cached.is_dir() else None,
                           **({"resolved_settings": settings} if settings is not None else {})})
    lines = task_lines(kernel, task, cached)
    if settings is not None:
        lines.append(f"  settings with --model {model}:")
        lines += [f"    {row['name']} = {row['value']!r}  ({row['source']})" for row in settings]
    click.echo("\n".join(lines))
    return None


@click.command()
@click.argument("tasks", nargs=-1, metavar="[TASK]…")
@click.option("--data-dir", type=click.Path(path_type=Path), help="Read this data folder (or zip) instead of "
              "the bundled sample (one task).")
@click.pass_context
def check(ctx: click.Context, tasks: tuple[str, ...], data_dir: Path | None) -> None:
    """Import every reference of each task and read its sample (or --data-dir) end to end."""
    from clue_builtin.deep_checks import deep_problems

    kernel = _kernel(ctx)
    names = list(tasks) or list(kernel.tasks)
    if data_dir is not None and len(names) != 1:
        raise ClueError("--data-dir reads one task's data: name exactly one task")
    problems: list[str] = []
    for name in names:
        task = kernel.task(name)
        found = deep_problems(kernel, task, data_dir, echo=lambda line: click.echo(line, err=True))
        problems += [f"{task.name}: {p}" for p in found]
        click.echo(f"{task.name}: {'ok' if not found else f'{len(found)} problem(s)'}")
    problems += [f"plugin {p.name}: {p.error}" for p in kernel.plugins if p.status == "error"]
    for problem in problems:
        click.echo(f"error: {problem}", err=True)
    if problems:
        ctx.exit(2)
