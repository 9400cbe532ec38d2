"""Load tokenizers and task heads from a hub id or a local ``save_pretrained`` directory.

Every failure a user can cause (a typo in a hub id, no network, a directory without
weights, a checkpoint that needs remote code) becomes one :class:`ClueError` line.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from clue_core.errors import ClueError
from clue_models_hf.heads import auto_class

MODEL_FILE = "clue_model.json"


def quiet_transformers() -> None:
    """Progress bars of weight loading/saving and init warnings only clutter a run's output."""
    from transformers.utils import logging

    logging.set_verbosity_error()
    logging.disable_progress_bar()


def read_model_file(source: str) -> dict[str, Any] | None:
    """The ``clue_model.json`` of a directory saved by a previous run, if ``source`` is one."""
    path = Path(source).expanduser() / MODEL_FILE
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ClueError(f"{path}: unreadable model description ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("kind"), str):
        raise ClueError(f"{path}: expected an object with a 'kind' field")
    return data


def _explain(source: str, exc: Exception) -> ClueError:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if "trust_remote_code" in str(exc):
        return ClueError(f"{source}: this checkpoint runs its own code; pass --set trust_remote_code=true "
                         f"only if you trust it ({text})")
    where = "directory" if Path(source).expanduser().exists() else "hub id"
    hint = "" if where == "directory" else " (no network? models download once into the Hugging Face cache)"
    return ClueError(f"cannot load {where} {source!r}: {text}{hint}")


def check_source(source: str) -> None:
    path = Path(source).expanduser()
    looks_local = source.startswith((".", "/", "~")) or (os.sep in source.strip("/") and path.exists())
    if looks_local and not path.is_dir():
        raise ClueError(f"{source}: no such model directory")


def load_tokenizer(source: str, trust_remote_code: bool) -> Any:
    """AutoTokenizer; falls back to BERT's tokenizer for checkpoints that ship only ``vocab.txt``.

    (CLUE's ALBERT models pair an ALBERT encoder with a BERT vocabulary, which
    AutoTokenizer would otherwise try to read as SentencePiece.)
    """
    from transformers import AutoTokenizer, BertTokenizer

    check_source(source)
    try:
        tokenizer = AutoTokenizer.from_pretrained(source, trust_remote_code=trust_remote_code)
    except Exception as exc:  # transformers raises OSError, ValueError, KeyError... for bad checkpoints
        vocab = Path(source).expanduser() / "vocab.txt"
        if not vocab.is_file():
            raise _explain(source, exc) from None
        tokenizer = BertTokenizer(vocab_file=str(vocab))
    if tokenizer.pad_token_id is None:
        raise ClueError(f"{source}: the tokenizer has no padding token")
    return tokenizer


def load_head(source: str, kind: str, labels: Sequence[str], trust_remote_code: bool) -> Any:
    """The task head for ``kind`` on top of ``source``'s encoder (head freshly initialised if new)."""
    from transformers import AutoConfig

    check_source(source)
    try:
        config = AutoConfig.from_pretrained(source, trust_remote_code=trust_remote_code)
    except Exception as exc:
        raise _explain(source, exc) from None
    options: dict[str, Any] = {}
    if labels:
        id2label = dict(enumerate(labels))
        old = [config.id2label[i] for i in sorted(config.id2label)] if getattr(config, "id2label", None) else []
        if old != list(labels):
            options["ignore_mismatched_sizes"] = True
        config.num_labels = len(labels)
        config.id2label = id2label
        config.label2id = {label: i for i, label in id2label.items()}
        config.problem_type = "single_label_classification"
    try:
        return auto_class(kind).from_pretrained(source, config=config, trust_remote_code=trust_remote_code,
                                                **options)
    except Exception as exc:
        raise _explain(source, exc) from None
