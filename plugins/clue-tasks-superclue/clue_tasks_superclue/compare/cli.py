"""``clue-core compare``, the click command this plugin registers through ``clue_commands``.

The kernel imports this module only when ``compare`` runs (``clue-core --help`` shows the
spec's help from :mod:`clue_tasks_superclue.hooks`), so the option parsing lives here and the
work in :mod:`clue_tasks_superclue.compare.command`, imported on the command's first line.
A :class:`~clue_core.plugin.ClueError` raised here is printed by the kernel's group as one
``error:`` line with exit code 2, as for a built-in command.
"""

from __future__ import annotations

from pathlib import Path

import click

from clue_core.plugin import ClueError


@click.command(name="compare")
@click.argument("runs", nargs=-1, required=True, type=click.Path(path_type=Path), metavar="RUN…")
@click.option("--reference", required=True, type=click.Path(path_type=Path), metavar="RUN",
              help="The run every model is compared with (win/tie/loss).")
@click.option("--output", "-o", "output_dir", required=True, type=click.Path(path_type=Path, file_okay=False),
              help="Write comparison.json into this folder.")
@click.option("--tie-margin", type=click.FloatRange(min=0), default=0.5, show_default=True,
              help="Points (0-10) within which two answers tie.")
@click.option("--human", type=click.Path(path_type=Path, dir_okay=False), metavar="FILE",
              help="Human scores per model (JSON object or CSV model,score): Pearson and Spearman.")
@click.option("--export-sheet", type=click.Path(path_type=Path, dir_okay=False), metavar="FILE",
              help="Write a sample of judge judgments as a CSV sheet for people to grade.")
@click.option("--sheet-size", type=click.IntRange(min=1), default=None, help="Rows on the sheet (default 100).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the sheet's sample.")
@click.option("--import-sheet", type=click.Path(path_type=Path, dir_okay=False), metavar="FILE",
              help="Read a graded sheet back: the judge's agreement with people.")
@click.option("--task", default="superclue", show_default=True, help="The task folder and task of the runs.")
@click.option("--force", is_flag=True, help="Replace an existing comparison.json or sheet.")
def compare(runs: tuple[Path, ...], reference: Path, output_dir: Path, tie_margin: float, human: Path | None,
            export_sheet: Path | None, sheet_size: int | None, seed: int, import_sheet: Path | None, task: str,
            force: bool) -> None:
    """Compare judged SuperCLUE runs: scores, win/tie/loss against a reference, maturity; comparison.json.

    RUN is a run folder holding superclue/ (clue-core run -o) or the task folder itself.
    """
    from clue_tasks_superclue.compare.command import CompareOptions, compare_command

    if sheet_size is not None and export_sheet is None:
        raise ClueError("--sheet-size goes with --export-sheet")
    options = CompareOptions(runs=list(runs), reference=reference, output_dir=output_dir, task=task,
                             tie_margin=tie_margin, human=human, export_sheet=export_sheet, seed=seed,
                             import_sheet=import_sheet, force=force,
                             **({"sheet_size": sheet_size} if sheet_size is not None else {}))
    result = compare_command(options)
    for warning in result.warnings:
        click.echo(f"warning: {warning}", err=True)
    click.echo(result.text)
