"""``clue-core pretrain`` and ``clue-core corpus``: click commands, registered through ``clue_commands``.

They run inside the kernel's command group, so a :class:`~clue_core.plugin.ClueError` is
one ``error: …`` line and exit code 2. torch and transformers are imported only when
``pretrain`` runs, jieba only when it tokenizes.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from clue_core.plugin import MAX_SEED, ClueError, FiniteFloat

PRETRAIN_HELP = """Pre-train an encoder with whole-word masked-LM on a corpus folder.

CORPUS is a folder of UTF-8 .txt files in CLUECorpus2020's layout (one sentence per line, a
blank line between documents, sub-folders allowed). MODEL is hf-tiny, hf:<hub id or folder>
(continue pre-training it) or config:<config.json or folder> (a new model). OUT receives
model/ (fine-tune it with clue-core run --model hf:OUT/model), metrics.json, data/ and
training/ (checkpoints). Ctrl-C or SIGTERM writes a checkpoint first; --resume continues.
"""


@click.command("pretrain", help=PRETRAIN_HELP)
@click.option("--corpus", "corpus_dir", required=True, type=click.Path(path_type=Path), help="Corpus folder.")
@click.option("--model", "-m", "model", required=True, help="hf-tiny, hf:<hub id or folder>, config:<path>.")
@click.option("--output", "-o", "output", required=True, type=click.Path(path_type=Path), help="Output folder.")
@click.option("--set", "pairs", multiple=True, metavar="NAME=VALUE",
              help="A setting (repeatable); --list-settings shows them.")
@click.option("--seed", type=click.IntRange(0, MAX_SEED), default=42, show_default=True,  # numpy refuses others
              help="Seeds the model, batch order and masks.")
@click.option("--resume", is_flag=True, help="Continue the run in OUT from its newest checkpoint.")
@click.option("--overwrite", is_flag=True, help="Replace the pre-training run in OUT.")
@click.option("--list-settings", is_flag=True, is_eager=True, expose_value=False, help="List the settings and exit.",
              callback=lambda ctx, _p, v: _list_settings(ctx) if v else None)
def pretrain(corpus_dir: Path, model: str, output: Path, pairs: tuple[str, ...], seed: int, resume: bool,
             overwrite: bool) -> None:
    from clue_models_hf.pretrain import pretrain as run
    from clue_models_hf.pretrain_loop import Interrupted

    try:
        run(corpus_dir, model, output, pairs, seed=seed, resume=resume, overwrite=overwrite)
    except Interrupted as stopped:
        click.echo(f"{stopped}; continue with the same command and --resume", err=True)
        raise SystemExit(130) from None
    except OSError as exc:  # a full disk, a folder that cannot be written: one line; what is done is kept
        from clue_core.plugin import disk_fault_message

        kept = "; what was done is kept: continue with --resume" if (output / "pretrain.json").is_file() else ""
        raise ClueError(disk_fault_message("pretrain", exc) + kept) from None


def _list_settings(ctx: click.Context) -> None:
    from clue_models_hf.pretrain_settings import settings_help

    click.echo(settings_help())
    ctx.exit(0)


@click.group("corpus")
def corpus() -> None:
    """Inspect a pre-training corpus, or split one big text file into its layout."""


@corpus.command("stats")
@click.argument("directory", type=click.Path(path_type=Path))
@click.option("--eval-share", type=FiniteFloat(0, 0.5), default=0.01, show_default=True,
              help="Count the documents pretrain would hold out at this share.")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def stats(directory: Path, eval_share: float, as_json: bool) -> None:
    """Files, documents, sentences and characters of a corpus folder; bad files named."""
    from clue_models_hf.corpus import corpus_stats

    result = corpus_stats(directory, eval_share)
    for bad in result.bad:
        click.echo(f"bad file: {bad.line()}", err=True)
    rows = {"files": result.files, "documents": result.documents, "sentences": result.sentences,
            "characters": result.characters, "bytes": result.bytes,
            "held_out_documents": result.held_out_documents, "bad_files": len(result.bad)}
    if as_json:
        click.echo(json.dumps(rows | {"bad": [b.line() for b in result.bad]}, ensure_ascii=False, indent=2))
        return
    width = max(len(k) for k in rows)
    for key, value in rows.items():
        click.echo(f"{key.replace('_', ' '):<{width}}  {value:>14,}")


@corpus.command("split")
@click.argument("source", type=click.Path(path_type=Path))
@click.option("--output", "-o", "target", required=True, type=click.Path(path_type=Path),
              help="A new or empty folder for the files.")
@click.option("--max-bytes", type=int, default=4 * 1024 * 1024, show_default=True, help="Largest file size.")
@click.option("--prefix", default=None, help="File name prefix (default: SOURCE's name).")
def split(source: Path, target: Path, max_bytes: int, prefix: str | None) -> None:
    """Split one big text file (one sentence per line, blank line between documents) into files of at
    most --max-bytes, never cutting a document that fits, as CLUECorpus2020 was made."""
    from clue_models_hf.corpus_split import split_file

    result = split_file(source, target, max_bytes, prefix, say=lambda line: click.echo(line, err=True))
    click.echo(f"{result.documents} documents in {result.files} files under {target}")


__all__ = ["ClueError", "corpus", "pretrain"]
