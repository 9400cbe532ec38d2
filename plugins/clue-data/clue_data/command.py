"""``clue-core download``: fetch official task data into the cache ahead of a run (an offline cluster node).

Registered through the ``clue_commands`` hook and imported only when it runs; it finds the kernel
in its click context, as every plugin command does.
"""

from __future__ import annotations

import sys

import click

from clue_core.plugin import ClueError, Registry, TaskSpec
from clue_data.cache import ensure_task_data


@click.command()
@click.argument("tasks", nargs=-1, metavar="TASK…")
@click.option("--all", "all_tasks", is_flag=True, help="Every task that has an official archive.")
@click.pass_context
def download(ctx: click.Context, tasks: tuple[str, ...], all_tasks: bool) -> None:
    """Download, verify and extract official task data into the cache ($CLUE_HOME)."""
    kernel: Registry = ctx.find_root().obj["kernel"]
    specs: list[TaskSpec]
    if all_tasks:
        specs = [t for t in kernel.tasks.values() if t.source]
    elif tasks:
        specs = [kernel.task(name) for name in tasks]
    else:
        raise ClueError("name the tasks to download, or pass --all")
    for task in specs:
        folder = ensure_task_data(task, progress=sys.stderr.isatty())
        click.echo(f"{task.name}: {folder}")
