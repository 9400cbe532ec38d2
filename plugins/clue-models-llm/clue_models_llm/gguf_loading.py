"""``llm:<file>.gguf``: a GGUF file loaded through transformers' GGUF support, weights dequantised.

The file is checked first (:func:`~clue_models_llm.gguf_file.check_gguf`: one line naming
it when it is missing, not GGUF, cut short or of an architecture transformers cannot
build). Its identity is the SHA-256 of its bytes, streamed once per process, so a file
replaced at the same path never reuses cached answers.

Reading a GGUF costs minutes on a CPU (transformers parses the metadata, a 262k-token
vocabulary included, once for the tokenizer and once for the model, then dequantises
every tensor). What that produces depends only on the file's bytes and the transformers
version, so it is kept: the dequantised model (float32 safetensors) and its tokenizer go to
``<cache>/gguf/<sha256>-transformers-<version>/``, written in a temporary folder and
renamed into place when complete, and the next run loads that folder in seconds. Without a
cache folder (``result_cache=false`` does not matter here; a Python caller without a
``cache_dir``) every load reads the GGUF itself.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from clue_core.plugin import ClueError

SUFFIX = ".gguf"
#: Written last into a converted folder: its presence says the folder is complete.
DONE = "clue-gguf-source.json"


def is_gguf(source: str) -> bool:
    return source.lower().endswith(SUFFIX)


def gguf_path(source: str) -> Path:
    return Path(source).expanduser()


def check(source: str) -> None:
    """What can be checked before loading: the file is there and is a whole GGUF file."""
    from clue_models_llm.gguf_file import check_gguf

    check_gguf(gguf_path(source))


def identity(source: str) -> dict[str, Any]:
    from clue_models_llm.loading import _file_digest

    path = gguf_path(source)
    return {"source": "gguf", "path": str(path.resolve()), "sha256": _file_digest(path)}


def converted_folder(store: Path, digest: str) -> Path:
    import transformers

    return store / "gguf" / f"{digest}-transformers-{transformers.__version__}"


def load(source: str, *, dtype: Any, device: Any, store: Path | None) -> tuple[Any, Any, dict[str, Any]]:
    """``(model, tokenizer, identity)`` of a GGUF file, from its converted folder where one is kept."""
    from clue_models_llm import loading

    check(source)
    who = identity(source)
    folder = converted_folder(store, who["sha256"]) if store is not None else None
    if folder is not None and (folder / DONE).is_file():
        model, tokenizer = _from_folder(folder, dtype)
    else:
        model, tokenizer = _from_gguf(gguf_path(source))
        if folder is not None:
            _keep(model, tokenizer, folder, who)
        model.to(dtype)
    if device is not None:
        model.to(device)
    model.eval()
    loading.quiet_transformers()
    return model, tokenizer, who


def _from_gguf(path: Path) -> tuple[Any, Any]:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    options: dict[str, Any] = {"gguf_file": path.name}
    try:
        tokenizer = AutoTokenizer.from_pretrained(str(path.parent), **options)
        try:  # transformers 5 may keep blocks packed (with the kernels package): dequantised, always
            from transformers import GgufConfig

            options["quantization_config"] = GgufConfig(dequantize=True)
        except ImportError:  # transformers 4 always dequantises
            pass
        # float32 first: a saved copy keeps every value the file holds, whatever dtype this run wants
        model = AutoModelForCausalLM.from_pretrained(str(path.parent), dtype=torch.float32, **options)
    except Exception as exc:  # transformers raises ValueError, KeyError, OSError… for what it cannot build
        from clue_models_llm.loading import _first_line

        raise ClueError(f"{path}: transformers cannot build a model from this GGUF file ({_first_line(exc)})") from None
    _plain(model)
    return model, tokenizer


def _plain(model: Any) -> None:
    """A dequantised model is a plain one: without its GGUF quantizer it casts and saves like any other.

    transformers keeps the quantizer attached after dequantising, and refuses ``to(dtype)``
    and ``save_pretrained`` for it; nothing of it is left in the weights.
    """
    import torch

    if any(type(p) is not torch.nn.Parameter for p in model.parameters()):
        return  # packed blocks after all: leave the model as transformers made it
    if getattr(model, "hf_quantizer", None) is not None:
        model.hf_quantizer = None
    for config in {id(c): c for c in (model.config, getattr(model.config, "get_text_config", lambda: None)())
                   if c is not None}.values():
        if hasattr(config, "quantization_config"):
            delattr(config, "quantization_config")


def _from_folder(folder: Path, dtype: Any) -> tuple[Any, Any]:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    try:
        tokenizer = AutoTokenizer.from_pretrained(str(folder))
        model = AutoModelForCausalLM.from_pretrained(str(folder), dtype=dtype)
    except Exception as exc:  # a converted folder damaged after it was written
        from clue_models_llm.loading import _first_line

        raise ClueError(f"{folder}: the converted copy of a GGUF file cannot be loaded ({_first_line(exc)}); "
                        f"delete this folder and it is converted again") from None
    return model, tokenizer


def _keep(model: Any, tokenizer: Any, folder: Path, who: dict[str, Any]) -> None:
    """Save the float32 model where the next run finds it; a failure to save only costs that next run time."""
    import json

    scratch: Path | None = None
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(prefix=".partial-", dir=folder.parent))
        model.save_pretrained(str(scratch))
        tokenizer.save_pretrained(str(scratch))
        (scratch / DONE).write_text(json.dumps(who, sort_keys=True) + "\n", encoding="utf-8")
        with contextlib.suppress(OSError):  # another process (a rank of the same run) put it there first
            os.replace(scratch, folder)
    except Exception:  # a copy that cannot be written (disk full, a transformers refusal) ends no run
        pass
    finally:
        if scratch is not None and scratch.exists():
            shutil.rmtree(scratch, ignore_errors=True)
