"""``clue-core bootstrap RUN_A RUN_B``: is A better than B on dev (or another scored split), with a number?

Each side is a run folder; ``--a``/``--b`` may add more runs to a side (the seeds of one
configuration), whose scores are then averaged per example. The two sides must be runs of one
task on the same examples of the split (``--split``, default dev; DataCLUE's runs share only
``test_public``, since its users change dev); anything else is one line and exit 2.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from clue_core.plugin import ClueError


def _kernel(ctx: click.Context) -> Any:
    kernel = (ctx.find_root().obj or {}).get("kernel")
    if kernel is None:
        raise ClueError("the bootstrap command runs as 'clue-core bootstrap' (it needs clue-core's plugin kernel)")
    return kernel


@click.command()
@click.argument("run_a", type=click.Path(path_type=Path))
@click.argument("run_b", type=click.Path(path_type=Path))
@click.option("--a", "more_a", multiple=True, type=click.Path(path_type=Path),
              help="Another run of side A (another seed of its configuration); repeatable.")
@click.option("--b", "more_b", multiple=True, type=click.Path(path_type=Path),
              help="Another run of side B; repeatable.")
@click.option("--samples", type=click.IntRange(min=100, max=1_000_000), default=None,
              help="Bootstrap draws (default 10000; 1000 where the metric must run again on each draw).")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True, help="Seed of the draws.")
@click.option("--split", default="dev", show_default=True, metavar="SPLIT",
              help="The scored split both sides predicted (dev, or one the task scores beside it: test_public).")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_context
def bootstrap(ctx: click.Context, run_a: Path, run_b: Path, more_a: tuple[Path, ...], more_b: tuple[Path, ...],
              samples: int | None, seed: int, split: str, as_json: bool) -> None:
    """Paired bootstrap of two runs of one task on the same examples of a scored split (dev unless --split):
    A − B, its 95% interval, a p-value; examples that share a passage are resampled together."""
    from clue_sweep.bootstrap import compare

    for path in (run_a, run_b, *more_a, *more_b):
        if not path.is_dir():
            raise ClueError(f"{path}: no such run directory")
    result = compare(_kernel(ctx), [run_a, *more_a], [run_b, *more_b], samples=samples, seed=seed, split=split)
    if as_json:
        click.echo(json.dumps(result, ensure_ascii=False, indent=2))
        return
    mean = {side: f" (mean of {len(result[side]['runs'])} runs)" if len(result[side]["runs"]) > 1 else ""
            for side in ("a", "b")}
    clustered = f", clustered by passage ({result['groups']} groups)" if result["unit"] == "group" else ""
    click.echo(f"{result['task']} {result['split']} {result['metric']}: A {result['a']['score']:.2f}{mean['a']}, "
               f"B {result['b']['score']:.2f}{mean['b']}, on {result['examples']} examples{clustered}")
    click.echo(f"A − B = {result['difference']:+.2f}, {result['confidence']:.0%} interval "
               f"{result['low']:+.2f} to {result['high']:+.2f}, two-sided p = {result['p_value']:.3g} "
               f"({result['samples']} paired draws, seed {result['seed']}; {result['method']})")
