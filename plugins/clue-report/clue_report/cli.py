"""``clue-core report``: the click command, registered through the ``clue_commands`` hook.

It runs inside the kernel's command group, so a :class:`~clue_core.plugin.ClueError` raised
anywhere below becomes one ``error: …`` line with exit code 2, as for a built-in command;
the kernel is the group's (``ctx.obj["kernel"]``, built once per invocation).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from clue_core.plugin import ClueError


def _kernel(ctx: click.Context) -> Any:
    """The group's kernel: the one every command of this invocation uses (the group made it to find
    this command, so it is always there under ``clue-core``)."""
    kernel = (ctx.find_root().obj or {}).get("kernel")
    if kernel is None:
        raise ClueError("the report command runs as 'clue-core report' (it needs clue-core's plugin kernel)")
    return kernel


@click.command("report")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path), metavar="RUN_OR_FOLDER…")
@click.option("--output", "-o", "output_dir", type=click.Path(path_type=Path, file_okay=False),
              help="Write index.html, report.json and report.md into this folder.")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
@click.option("--force", is_flag=True, help="Replace report files in -o DIR that clue-core did not write.")
@click.option("--examples", type=click.IntRange(min=1), default=None, metavar="N",
              help="Dev examples per run in the page's explorer (default 1000; the rest are counted).")
@click.option("--baseline", type=click.Path(path_type=Path), default=None, metavar="RUN",
              help="The DataCLUE raw-data run the others are set beside (default: a --sample run or one read from "
                   "raw_<task>/).")
@click.pass_context
def report(ctx: click.Context, paths: tuple[Path, ...], output_dir: Path | None, as_json: bool, force: bool,
           examples: int | None, baseline: Path | None) -> None:
    """Summarise runs: dev scores and leaderboard group averages; with -o, an HTML leaderboard report.

    RUN_OR_FOLDER is a run directory, a folder of runs (clue-core run -o), or a file a report
    section reads, such as a SuperCLUE comparison.json (or a folder holding one). -o DIR writes
    index.html (self-contained), report.json and report.md. The page's explorer lists every
    dev example of each run (up to --examples N), with filters kept in the link.
    """
    from clue_report.command import report_command
    from clue_report.explorer import DEFAULT_EXAMPLES

    if force and output_dir is None:
        raise ClueError("--force goes with -o DIR")
    if examples is not None and output_dir is None:
        raise ClueError("--examples goes with -o DIR (the explorer is in index.html)")
    if baseline is not None and output_dir is None:
        raise ClueError("--baseline goes with -o DIR (the DataCLUE comparison is in index.html and report.md)")
    click.echo(report_command(_kernel(ctx), list(paths), output_dir=output_dir, as_json=as_json, force=force,
                              examples=DEFAULT_EXAMPLES if examples is None else examples, baseline=baseline))
