"""``clue-core compare``, the click command this plugin registers through ``clue_commands``.

The kernel imports this module only when ``compare`` runs (``clue-core --help`` shows the
spec's help from :mod:`clue_tasks_superclue.hooks`), so the option parsing lives here and the
work in :mod:`clue_tasks_superclue.compare.command`, imported on the command's first line.
A :class:`~clue_core.plugin.ClueError` raised here is printed by the kernel's group as one
``error:`` line with exit code 2, as for a built-in command. Float options are
:class:`~clue_core.plugin.FiniteFloat`: ``--tie-margin nan`` would make every game a tie and
write NaN into comparison.json. What is printed names models and files people chose, so it
goes out through :func:`~clue_core.plugin.printable` (an ESC in a model name shown as ``\\x1b``).
"""

from __future__ import annotations

from pathlib import Path

import click

from clue_core.plugin import ClueError, FiniteFloat, printable


@click.command(name="compare")
@click.argument("runs", nargs=-1, required=True, type=click.Path(path_type=Path), metavar="RUN…")
@click.option("--reference", required=True, type=click.Path(path_type=Path), metavar="RUN",
              help="The run every model is compared with (win/tie/loss).")
@click.option("--output", "-o", "output_dir", required=True, type=click.Path(path_type=Path, file_okay=False),
              help="Write comparison.json into this folder.")
@click.option("--tie-margin", type=FiniteFloat(min=0), default=0.5, show_default=True,
              help="Points (0-10) within which two answers tie.")
@click.option("--human", type=click.Path(path_type=Path, dir_okay=False), metavar="FILE",
              help="Human scores per model (JSON object or CSV model,score): Pearson and Spearman.")
@click.option("--export-sheet", type=click.Path(path_type=Path, dir_okay=False), metavar="FILE",
              help="Write a sample of judge judgments as a CSV sheet for people to grade.")
@click.option("--sheet-size", type=click.IntRange(min=1), default=None, help="Rows on the sheet (default 100).")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Seed of the sheet's sample, the ratings' bootstrap and Elo's shuffled orders.")
@click.option("--import-sheet", type=click.Path(path_type=Path, dir_okay=False), metavar="FILE",
              help="Read a graded sheet back: the judge's agreement with people.")
@click.option("--task", default=None, metavar="TASK",
              help="The task folder to compare in run folders holding several tasks' runs "
                   "(default: the one of superclue, superclue-cpif there).")
@click.option("--bootstrap", type=click.IntRange(min=0), default=1000, show_default=True,
              help="Bradley-Terry bootstrap rounds over questions (the 95% intervals; 0: none).")
@click.option("--elo-orders", type=click.IntRange(min=1), default=100, show_default=True,
              help="Shuffled orders of the games Elo is averaged over.")
@click.option("--elo-k", type=FiniteFloat(min=0, min_open=True), default=4.0, show_default=True,
              help="Elo's K: rating points a game moves at most.")
@click.option("--force", is_flag=True, help="Replace an existing comparison.json or sheet.")
def compare(runs: tuple[Path, ...], reference: Path, output_dir: Path, tie_margin: float, human: Path | None,
            export_sheet: Path | None, sheet_size: int | None, seed: int, import_sheet: Path | None,
            task: str | None, bootstrap: int, elo_orders: int, elo_k: float, force: bool) -> None:
    """Compare SuperCLUE runs (judged or pass/fail): scores, win/tie/loss, Bradley-Terry, Elo, points; comparison.json.

    RUN is a run folder holding superclue/ or superclue-cpif/ (clue-core run -o) or the task folder
    itself; every run must be of one task (its metrics.json says which).
    """
    from clue_tasks_superclue.compare.command import CompareOptions, compare_command
    from clue_tasks_superclue.compare.standings import RatingOptions

    if sheet_size is not None and export_sheet is None:
        raise ClueError("--sheet-size goes with --export-sheet")
    options = CompareOptions(runs=list(runs), reference=reference, output_dir=output_dir, task=task,
                             tie_margin=tie_margin, human=human, export_sheet=export_sheet, seed=seed,
                             import_sheet=import_sheet, force=force,
                             ratings=RatingOptions(bootstrap=bootstrap, elo_orders=elo_orders, elo_k=elo_k),
                             **({"sheet_size": sheet_size} if sheet_size is not None else {}))
    result = compare_command(options)
    for warning in result.warnings:
        click.echo(f"warning: {printable(warning)}", err=True)
    click.echo(printable(result.text, lines=True))
