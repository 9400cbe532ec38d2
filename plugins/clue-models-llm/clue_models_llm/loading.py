"""Load a causal LM and its tokenizer from a hub id or a local folder; say who it is.

Every failure a user can cause (a typo in a hub id, no network, a folder without weights,
a checkpoint that needs remote code, fp16 on a CPU) becomes one :class:`ClueError` line.

The model's *identity* keys the result cache: a hub model is its commit (the snapshot
transformers loaded), a local folder the SHA-256 of its weight, configuration and
tokenizer files, so a folder retrained at the same path never reuses old answers.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clue_core.plugin import ClueError

WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".gguf", ".msgpack", ".h5")
IDENTITY_FILES = ("config.json", "tokenizer.json", "tokenizer_config.json", "tokenizer.model", "vocab.json",
                  "merges.txt", "vocab.txt", "special_tokens_map.json", "chat_template.jinja", "chat_template.json")
_DIGESTS: dict[str, str] = {}


def quiet_transformers() -> None:
    """Progress bars of weight loading and init warnings only clutter a run's output."""
    from transformers.utils import logging

    logging.set_verbosity_error()
    logging.disable_progress_bar()


def _sample(path: Path) -> str:
    """A cheap fingerprint: size, times and the first and last MiB (what the memo is keyed by)."""
    stat = path.stat()
    digest = hashlib.sha256(f"{path.resolve()}\0{stat.st_size}\0{stat.st_mtime_ns}\0{stat.st_ino}".encode())
    with path.open("rb") as handle:
        digest.update(handle.read(1 << 20))
        if stat.st_size > 2 << 20:
            handle.seek(-(1 << 20), os.SEEK_END)
            digest.update(handle.read())
    return digest.hexdigest()


def _file_digest(path: Path) -> str:
    """SHA-256 of a file's content, computed once per process for an unchanged file."""
    key = _sample(path)
    if key not in _DIGESTS:
        digest = hashlib.sha256()
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 22), b""):
                digest.update(block)
        _DIGESTS[key] = digest.hexdigest()
    return _DIGESTS[key]


def _model_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file() and (p.suffix in WEIGHT_SUFFIXES
                                                                  or p.name in IDENTITY_FILES))


def fingerprint(source: str) -> str:
    """Cheap: changes when a local folder's files (or a GGUF file) change; the id for a hub model."""
    folder = Path(source).expanduser()
    if folder.is_file():
        return _sample(folder)
    if not folder.is_dir():
        return source
    return hashlib.sha256("".join(_sample(p) for p in _model_files(folder)).encode()).hexdigest()


def folder_digest(folder: Path) -> str:
    """SHA-256 over the names and contents of a model folder's weight, config and tokenizer files."""
    digest = hashlib.sha256()
    files = _model_files(folder)
    if not any(p.suffix in WEIGHT_SUFFIXES for p in files):
        raise ClueError(f"{folder}: no weight files (*.safetensors, *.bin) in this folder")
    for path in files:
        digest.update(f"{path.relative_to(folder).as_posix()}\0{_file_digest(path)}\0".encode())
    return digest.hexdigest()


def is_local(source: str) -> bool:
    if source.lower().endswith(".gguf"):
        return True
    path = Path(source).expanduser()
    try:
        return path.is_dir() or source.startswith((".", "/", "~")) or (os.sep in source.strip("/") and path.exists())
    except OSError:  # a name the file system cannot hold (too long): no folder, a hub id's check says what it is
        return False


def check_source(source: str) -> None:
    """What can be checked before anything is loaded: a local folder exists and has a configuration."""
    folder = Path(source).expanduser()
    if source.lower().endswith(".gguf"):
        from clue_models_llm.gguf_file import check_gguf  # not gguf_loading, which builds on this module

        check_gguf(folder)
    elif is_local(source):
        if not folder.is_dir():
            raise ClueError(f"{source}: no such model folder")
        if not (folder / "config.json").is_file():
            raise ClueError(f"{source}: not a model folder (no config.json; save models with save_pretrained)")


def pick_device(device_map: str, rank: int) -> Any:
    import torch

    if device_map:
        return None
    if torch.cuda.is_available():
        local = int(os.environ.get("LOCAL_RANK", rank % max(torch.cuda.device_count(), 1)) or 0)
        torch.cuda.set_device(local)
        return torch.device("cuda", local)
    return torch.device("cpu")


@dataclass(frozen=True)
class Precision:
    """How a model is loaded and computes: ``name`` (recorded: the identity's ``dtype``, so the cache never
    serves one precision's answers to another), ``load`` (the torch dtype weights are loaded in) and ``mixed``
    (then :func:`clue_models_llm.cpu_bf16.to_mixed` turns the loaded model into bf16-mixed)."""

    name: str
    load: Any
    mixed: bool = False

    def finish(self, model: Any) -> Any:
        """The loaded model as it computes: bf16-mixed converted in place (once), else as loaded."""
        if self.mixed:
            from clue_models_llm.cpu_bf16 import to_mixed

            to_mixed(model)
        return model


def pick_precision(name: str, device: Any, source: str | None = None, revision: str = "") -> Precision:
    """``auto``: bfloat16 on GPUs that have it (else float16); on the CPU bf16-mixed where the CPU has native
    bf16 and the checkpoint is stored in bf16, else float32 (:func:`clue_models_llm.cpu_bf16.auto_on_cpu`;
    ``source`` None, llm-tiny, and GGUF files stay float32). ``float32`` is float32 on every CPU."""
    import torch

    from clue_models_llm.cpu_bf16 import MIXED

    gpu = torch.cuda.is_available() and (device is None or device.type == "cuda")
    if name == "auto":
        if gpu:
            return _plain(torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16)
        from clue_models_llm.cpu_bf16 import auto_on_cpu

        name = auto_on_cpu(source, revision, download=True)[0] or "float32"
    if name == MIXED:
        return Precision(MIXED, _mixed_load_dtype(source, revision), mixed=True)
    if name == "float16" and not gpu:
        raise ClueError("dtype=float16 needs a CUDA GPU; on the CPU use float32, bf16-mixed or bfloat16")
    return _plain(getattr(torch, name))


def _plain(dtype: Any) -> Precision:
    return Precision(str(dtype).replace("torch.", ""), dtype)


def _mixed_load_dtype(source: str | None, revision: str) -> Any:
    """bf16-mixed loads a checkpoint stored in bfloat16 as bfloat16 (its weights exact, half the peak memory;
    the rest widened to float32 after), anything else (llm-tiny, a GGUF file dequantised, a float32
    checkpoint) as float32, its Linear weights rounded to bf16 once after loading."""
    import torch

    from clue_models_llm.cpu_bf16 import checkpoint_config, reference_source, stored_dtype

    if source is None or reference_source(source):
        return torch.float32
    config = checkpoint_config(source, revision, download=True)
    return torch.bfloat16 if config is not None and stored_dtype(config) == "bfloat16" else torch.float32


def _explain(source: str, exc: Exception) -> ClueError:
    text = _first_line(exc)
    if "trust_remote_code" in str(exc):
        return ClueError(f"{source}: this checkpoint runs its own code; pass --set trust_remote_code=true only if "
                         f"you trust it ({text})")
    where = "folder" if Path(source).expanduser().exists() else "hub id"
    hint = "" if where == "folder" else " (no network? models download once into the Hugging Face cache)"
    return ClueError(f"cannot load {where} {source!r}: {text}{hint}")


def load_tokenizer(source: str, revision: str, trust_remote_code: bool) -> Any:
    from transformers import AutoTokenizer, PreTrainedTokenizerFast

    check_source(source)
    options: dict[str, Any] = {"trust_remote_code": trust_remote_code}
    if revision:
        options["revision"] = revision
    try:
        tokenizer = AutoTokenizer.from_pretrained(source, **options)
    except Exception as exc:  # transformers raises OSError, ValueError, KeyError... for bad checkpoints
        vocabulary = Path(source).expanduser() / "tokenizer.json"
        if not vocabulary.is_file():
            raise _explain(source, exc) from None
        try:  # a folder whose tokenizer_config.json names a class transformers lacks: its tokenizer.json alone
            tokenizer = PreTrainedTokenizerFast.from_pretrained(source)
        except Exception as fallback:  # a corrupt file: JSONDecodeError, or the tokenizers library's own error
            raise _unreadable(vocabulary.parent) or ClueError(
                f"{vocabulary}: cannot be read as a tokenizer ({_first_line(fallback)})") from None
    return tokenizer


def _unreadable(folder: Path) -> ClueError | None:
    """The first of a folder's tokenizer JSON files that is not JSON, named with the parser's line and column."""
    import json

    for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "config.json"):
        path = folder / name
        if not path.is_file():
            continue
        try:
            data = json.loads(path.read_bytes())
        except ValueError as exc:  # JSONDecodeError, or bytes that are not UTF-8
            where = f":{exc.lineno}" if isinstance(exc, json.JSONDecodeError) else ""
            return ClueError(f"{path}{where}: not valid JSON ({_first_line(exc)}); save the model again with "
                             f"save_pretrained")
        if not isinstance(data, dict):  # JSON, but transformers fails on it with a message naming nothing
            return ClueError(f"{path}: not a JSON object (it holds a {type(data).__name__}); save the model "
                             f"again with save_pretrained")
    return None


def _bad_weights(folder: Path) -> ClueError | None:
    """The first ``*.safetensors`` file of ``folder`` whose header does not read, named.

    safetensors' own error ("Error while deserializing header: invalid header length")
    says what is wrong but not in which file; a copy cut short is the usual cause.
    """
    try:
        from safetensors import safe_open
    except ImportError:
        return None
    for path in sorted(folder.glob("*.safetensors")):
        try:
            with safe_open(str(path), framework="pt"):
                pass
        except Exception as exc:  # SafetensorError (not an OSError), or an OSError reading it
            return ClueError(f"{path}: not a readable safetensors file ({_first_line(exc)}); copy or save the "
                             f"model again")
    return None


def _first_line(exc: Exception) -> str:
    """An exception's message on one line (its type where it has none)."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def load_model(source: str, *, revision: str, trust_remote_code: bool, dtype: Any, device: Any,
               device_map: str) -> Any:
    import transformers
    from transformers import AutoModelForCausalLM

    check_source(source)
    major = int(transformers.__version__.split(".")[0])
    options: dict[str, Any] = {"trust_remote_code": trust_remote_code,
                               ("dtype" if major >= 5 else "torch_dtype"): dtype}
    if revision:
        options["revision"] = revision
    if device_map:
        options["device_map"] = device_map
    try:
        model = AutoModelForCausalLM.from_pretrained(source, **options)
    except Exception as exc:
        folder = Path(source).expanduser()
        raise (folder.is_dir() and _bad_weights(folder)) or _explain(source, exc) from None
    if not device_map:
        model.to(device)
    model.eval()
    return model


def identity(source: str, model: Any, revision: str) -> dict[str, Any]:
    """Who the model is, for the cache key and the manifest."""
    folder = Path(source).expanduser()
    if folder.is_dir():
        return {"source": "folder", "path": str(folder.resolve()), "sha256": folder_digest(folder)}
    commit = getattr(model.config, "_commit_hash", None) or getattr(model.config, "commit_hash", None)
    if not commit:
        commit = _snapshot_commit(source, revision)
    if commit:
        return {"source": "hub", "id": source, "revision": revision or None, "commit": commit}
    snapshot = _snapshot_folder(source, revision)
    if snapshot is None:
        raise ClueError(f"{source}: cannot tell which snapshot was loaded (no commit hash); pass --set "
                        f"result_cache=false or a local folder")
    return {"source": "hub", "id": source, "revision": revision or None, "sha256": folder_digest(snapshot)}


def _snapshot_folder(source: str, revision: str) -> Path | None:
    try:
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(source, revision=revision or None, local_files_only=True))
    except Exception:  # not in the local cache, or an id the hub client refuses
        return None


def _snapshot_commit(source: str, revision: str) -> str | None:
    snapshot = _snapshot_folder(source, revision)
    return snapshot.name if snapshot is not None and len(snapshot.name) == 40 else None


def weights_digest(model: Any, tokenizer: Any) -> str:
    """SHA-256 of an in-memory model's weights and vocabulary (llm-tiny)."""
    import json

    digest = hashlib.sha256()
    digest.update(json.dumps(tokenizer.get_vocab(), sort_keys=True, ensure_ascii=False).encode())
    digest.update(model.config.to_json_string().encode())
    for name, tensor in sorted(model.state_dict().items()):
        digest.update(name.encode())
        digest.update(tensor.detach().float().cpu().contiguous().numpy().tobytes())
    return digest.hexdigest()
