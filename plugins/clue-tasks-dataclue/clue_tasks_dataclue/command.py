"""``clue-core dataclue audit TASK --data-dir DIR -o OUT``: the DataCLUE plugin's command group.

The click commands import the audit code only when they run, so ``clue-core --help`` stays fast.
Bad input (an unknown task, an ``OUT`` in the input folder, a bad line in the files) is one
``error:`` line and exit 2, as every clue-core command (the kernel's CLI turns a ``ClueError``
into that line).
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from clue_core.plugin import ClueError, FiniteFloat, Registry


def _kernel(ctx: click.Context) -> Registry:
    kernel = (ctx.find_root().obj or {}).get("kernel")
    if kernel is None:
        raise ClueError("the dataclue command runs as 'clue-core dataclue' (it needs clue-core's plugin kernel)")
    return kernel


@click.group()
def dataclue() -> None:
    """DataCLUE's data-centric tools: the model and recipe are fixed, the training data improves."""


@dataclue.command()
@click.argument("task")
@click.option("--data-dir", type=click.Path(path_type=Path, file_okay=False), required=True,
              help="The task's files: raw_<task>/, your improved copy, or DataCLUE's datasets/ (only read).")
@click.option("-o", "--output-dir", "out", type=click.Path(path_type=Path), required=True,
              help="Where audit.json, audit.md, data/ (the corrected copy) and the fold runs go.")
@click.option("--folds", type=click.IntRange(min=2, max=50), default=5, show_default=True,
              help="Cross-validation folds over train+dev (stratified by label).")
@click.option("--action", type=click.Choice(("relabel", "drop", "none")), default="relabel", show_default=True,
              help="What the corrected copy does with each suspect.")
@click.option("--model", default=None, help="The model of the folds (default: the recipe's, hf:hfl/rbtl3).")
@click.option("--seed", type=click.IntRange(min=0), default=42, show_default=True,
              help="Seed of the folds and of every fold's training (the recipe's 42).")
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE",
              help="A setting of every fold's run (departing from the recipe, as for run).")
@click.option("--near", type=FiniteFloat(min=0.0, max=1.0, min_open=True), default=0.8, show_default=True,
              help="Character 3-gram Jaccard at or above which two examples are near-duplicates.")
@click.option("--force", is_flag=True, help="Replace an OUT that exists and is not this audit's to resume.")
@click.pass_context
def audit(ctx: click.Context, task: str, data_dir: Path, out: Path, folds: int, action: str, model: str | None,
          seed: int, overrides: tuple[str, ...], near: float, force: bool) -> None:
    """Rank likely label errors (k-fold confident learning), find duplicates, write a corrected copy."""
    from clue_tasks_dataclue.catalog import RECIPE_MODEL, TASK_NAMES
    from clue_tasks_dataclue.run_audit import run_audit

    kernel = _kernel(ctx)
    spec = kernel.task(task)
    if spec.name not in TASK_NAMES:
        raise ClueError(f"task {spec.name} is not a DataCLUE task (choose {', '.join(TASK_NAMES)})")
    if not data_dir.is_dir():
        raise ClueError(f"--data-dir {data_dir}: no such folder")

    def echo(line: str) -> None:
        click.echo(line, file=sys.stderr)

    report = run_audit(kernel, spec, data_dir, out, folds=folds, action=action, model=model or RECIPE_MODEL,
                       seed=seed, overrides=overrides, near=near, force=force, echo=echo)
    changes = report["changes"]
    click.echo(f"{spec.name}: {len(report['suspects'])} likely label error(s) of {sum(report['examples'].values())} "
               f"examples ({changes['relabelled']} relabelled, {changes['dropped']} dropped in {out / 'data'}); "
               f"{len(report['exact_duplicates'])} exact duplicate group(s), {len(report['near_duplicates'])} "
               f"near-duplicate pair(s); {out / 'audit.md'}")
