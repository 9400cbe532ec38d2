"""``clue-core evaluate`` and ``clue-core submit``: the leaderboard's two commands, imported only when they run.

Each finds the kernel in its click context (``clue-core`` puts it there before it loads a plugin
command) and goes through the same functions as ``clue_core.api.evaluate`` / ``api.submit``, so the
command line and a notebook get the same checks, files and scores.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from clue_core.plugin import ClueError, Registry, format_table, printable


def _kernel(ctx: click.Context) -> Registry:
    kernel = (ctx.find_root().obj or {}).get("kernel")
    if kernel is None:
        raise ClueError(f"the {ctx.info_name} command runs as 'clue-core {ctx.info_name}' (it needs clue-core's "
                        f"plugin kernel)")
    return kernel


def _echo_json(data: Any) -> None:
    click.echo(json.dumps(data, ensure_ascii=False, indent=2, default=str))


@click.command()
@click.argument("task_name", metavar="TASK")
@click.argument("predictions", type=click.Path(path_type=Path))
@click.option("--data-dir", type=click.Path(path_type=Path), help="Extracted official folder or zip (or a parent).")
@click.option("--sample", is_flag=True, help="Score against the task's bundled sample.")
@click.option("--split", default="dev", show_default=True, help="Gold split to score against.")
@click.option("--allow-missing", is_flag=True, help="Score missing predictions as wrong instead of refusing.")
@click.option("--json", "as_json", is_flag=True, help="Print metrics as JSON.")
@click.pass_context
def evaluate(ctx: click.Context, task_name: str, predictions: Path, data_dir: Path | None, sample: bool, split: str,
             allow_missing: bool, as_json: bool) -> None:
    """Score a PREDICTIONS file against gold labels, with no model."""
    from clue_leaderboard.evaluate import evaluate_file, scorable_splits

    if sample and data_dir:
        raise ClueError("--sample and --data-dir exclude each other")
    kernel = _kernel(ctx)
    task = kernel.task(task_name)
    if split in scorable_splits(task) and predictions.name in {v.submission_file for v in task.test_versions}:
        # dev files without ids are numbered 0, 1, 2… like test files: the ids would match by accident
        click.echo(f"warning: {predictions.name} is named like a {task.name} test submission, "
                   f"but it is scored against {split}", err=True)
    metrics, count = evaluate_file(kernel, task, predictions, data_dir=data_dir, sample=sample, split=split,
                                   allow_missing=allow_missing)
    if as_json:
        return _echo_json({"task": task.name, "split": split, "examples": count, **metrics})
    # totals a metric declares as counts (KgCLUE's malformed) print whole, as in clue-core run's table
    whole = {name for metric in task.metrics for name in kernel.metric(metric).counts}
    click.echo(format_table([["task", "split", "examples", *metrics],
                             [task.name, split, str(count),
                              *(f"{v:.0f}" if k in whole else f"{v:.3f}" for k, v in metrics.items())]]))
    return None


@click.command()
@click.argument("run_dirs", nargs=-1, required=True, type=click.Path(path_type=Path), metavar="RUN_DIR…")
@click.option("--output", "-o", required=True, type=click.Path(path_type=Path), help="The zip to write.")
@click.option("--force", is_flag=True, help="Replace an existing zip.")
@click.pass_context
def submit(ctx: click.Context, run_dirs: tuple[Path, ...], output: Path, force: bool) -> None:
    """Check the submission files of runs against their test files and pack them into one zip."""
    from clue_core.plugin import MANIFEST
    from clue_leaderboard.runs import SELECTION, unfinished_runs
    from clue_leaderboard.submission import build_submission

    skipped: list[str] = []
    checked = build_submission(_kernel(ctx), list(run_dirs), output, force=force, skipped=skipped)
    for line in skipped:  # a folder's run of a task without a leaderboard (dataclue-*): not packed, and says so
        click.echo(f"note: {printable(line)}: not in the zip", err=True)
    for folder in dict.fromkeys(run_dirs):  # a folder of runs: an interrupted one is not packed, and says so
        given_runs = (folder / MANIFEST).is_file() or (folder / SELECTION).is_file()
        if not given_runs and (unfinished := unfinished_runs(folder)):
            click.echo(f"warning: {printable(folder)}: {unfinished}, not in the zip (continue with "
                       f"clue-core run --resume)", err=True)
    click.echo(format_table([["file", "task", "test version", "entries"]]
                            + [[c.name, c.task, c.version, str(c.entries)] for c in checked]))
    click.echo(f"wrote {printable(output)} ({len(checked)} files)")  # a name with ESC shown as \x1b
