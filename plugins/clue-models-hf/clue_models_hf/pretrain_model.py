"""What ``--model`` names for pre-training: a tokenizer and a masked-LM model.

* ``hf-tiny``: the offline backbone's BERT (``tiny_*`` settings) with a character
  vocabulary counted from the corpus, streaming;
* ``hf:<hub id or folder>``: an existing encoder with its masked-LM head, to continue
  pre-training it (the head is freshly initialised if the checkpoint lacks one);
* ``config:<config.json or folder>``: a new model from a transformers configuration,
  randomly initialised; its folder's tokenizer when it has one, else the character
  vocabulary of ``hf-tiny`` (and ``vocab_size`` set to it).

The tokenizer is saved into ``OUT/data/tokenizer`` once; a resumed run and the
tokenizing processes load it from there, so they all see the same vocabulary.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from clue_core.plugin import ClueError
from clue_models_hf import loading, tiny
from clue_models_hf.corpus import iter_parts

TINY = "hf-tiny"


def parse_model(name: str) -> tuple[str, str | None]:
    """("tiny" | "hf" | "config", argument); one line for anything else."""
    if name == TINY:
        return "tiny", None
    for prefix in ("hf:", "config:"):
        if name.startswith(prefix) and name[len(prefix):]:
            return prefix[:-1], name[len(prefix):]
    raise ClueError(f"--model {name!r}: expected hf-tiny, hf:<hub id or save_pretrained folder> or "
                    f"config:<config.json or folder>")


def check_model(name: str, log: Any) -> bool:
    """Everything about ``--model`` that can be checked before anything is written; returns
    whether a hub id loads from the local cache only."""
    kind, argument = parse_model(name)
    if kind == "config":
        path = Path(argument).expanduser()  # type: ignore[arg-type]
        if not (path.is_file() or (path / "config.json").is_file()):
            raise ClueError(f"--model {name}: no such configuration (a config.json file or a folder holding one)")
        return False
    if kind == "hf":
        loading.check_source(argument)  # type: ignore[arg-type]
        return loading.hub_access(argument, log)  # type: ignore[arg-type]
    return False


def _sentences(files: Sequence[Path]) -> Iterator[str]:
    for path in files:
        for _index, sentences, _end in iter_parts(path):
            yield from sentences


def _config_folder(argument: str) -> Path:
    path = Path(argument).expanduser()
    return path if path.is_dir() else path.parent


def build_tokenizer(name: str, files: Sequence[Path], values: Mapping[str, Any], local_only: bool) -> Any:
    kind, argument = parse_model(name)
    if kind == "hf":
        tokenizer = loading.load_tokenizer(argument, values["trust_remote_code"], local_only)  # type: ignore[arg-type]
    elif kind == "config" and any((_config_folder(argument) / f).is_file()  # type: ignore[arg-type]
                                  for f in ("tokenizer.json", "vocab.txt")):
        tokenizer = loading.load_tokenizer(str(_config_folder(argument)), values["trust_remote_code"])  # type: ignore[arg-type]
    else:
        size = values.get("tiny_vocab_size", tiny.TINY_DEFAULTS["tiny_vocab_size"])
        tokenizer = tiny.build_tokenizer(_sentences(files), size)
    if not getattr(tokenizer, "is_fast", False):
        raise ClueError(f"{name}: pre-training needs a fast tokenizer (character offsets map words onto tokens)")
    if tokenizer.mask_token_id is None or tokenizer.cls_token_id is None or tokenizer.sep_token_id is None:
        raise ClueError(f"{name}: the tokenizer has no [MASK], [CLS] or [SEP] token; a masked-LM needs them")
    return tokenizer


def build_model(name: str, tokenizer: Any, values: Mapping[str, Any], local_only: bool) -> Any:
    """The masked-LM model (seeded by the caller); checks that ``max_length`` fits its positions."""
    from transformers import AutoConfig, AutoModelForMaskedLM

    kind, argument = parse_model(name)
    trust = values["trust_remote_code"]
    if kind == "tiny":
        config = tiny.tiny_config(len(tokenizer), values, values["max_length"])
        model = AutoModelForMaskedLM.from_config(config)
    elif kind == "config":
        try:
            config = AutoConfig.from_pretrained(argument, trust_remote_code=trust)
        except Exception as exc:  # transformers raises several kinds for a bad file
            raise ClueError(f"--model {name}: unreadable configuration ({_one_line(exc)})") from None
        config.vocab_size = len(tokenizer)
        model = _or_explain(name, lambda: AutoModelForMaskedLM.from_config(config, trust_remote_code=trust))
    else:
        with loading.hub_offline(local_only):
            model = _or_explain(name, lambda: AutoModelForMaskedLM.from_pretrained(
                argument, trust_remote_code=trust, local_files_only=local_only))
        if model.get_input_embeddings().num_embeddings < len(tokenizer):
            raise ClueError(f"{name}: the tokenizer has {len(tokenizer)} tokens but the model only "
                            f"{model.get_input_embeddings().num_embeddings} embeddings")
    _check_length(name, model.config, values["max_length"])
    return model


def check_length(name: str, values: Mapping[str, Any], local_only: bool) -> None:
    """``max_length`` against the positions of the model's configuration, before the corpus is
    tokenized (hours on a real corpus) rather than after."""
    kind, argument = parse_model(name)
    if kind == "tiny":
        return
    from transformers import AutoConfig

    from clue_models_hf.loading import quiet_transformers

    quiet_transformers()
    try:
        with loading.hub_offline(local_only):
            config = AutoConfig.from_pretrained(argument, trust_remote_code=values["trust_remote_code"],
                                                local_files_only=local_only)
    except Exception as exc:  # transformers raises several kinds for a bad file or id
        raise ClueError(f"--model {name}: unreadable configuration ({_one_line(exc)})") from None
    _check_length(name, config, values["max_length"])


def _check_length(name: str, config: Any, length: int) -> None:
    limit = getattr(config, "max_position_embeddings", None)
    if getattr(config, "model_type", "") in ("roberta", "xlm-roberta") and limit:
        limit -= 2
    if limit and length > limit:
        raise ClueError(f"setting 'max_length' ({length}) is longer than {name} can take ({limit})")


def _one_line(exc: Exception) -> str:
    return " ".join(line.strip() for line in str(exc).splitlines() if line.strip()) or type(exc).__name__


def _or_explain(name: str, make: Any) -> Any:
    try:
        return make()
    except ClueError:
        raise
    except Exception as exc:  # transformers raises OSError, ValueError, KeyError... for bad checkpoints
        raise ClueError(f"--model {name}: cannot build a masked-LM model ({_one_line(exc)})") from None
