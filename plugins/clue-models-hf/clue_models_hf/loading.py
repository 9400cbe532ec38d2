"""Load tokenizers and task heads from a hub id or a local ``save_pretrained`` directory.

Every failure a user can cause (a typo in a hub id, no network, a directory without
weights, a checkpoint that needs remote code) becomes one :class:`ClueError` line.

Without network, transformers retries the hub for most of a minute before it says so.
Before a hub id is loaded, :func:`hub_access` therefore sends one HTTP request (a few
seconds at most, no retries) to the hub endpoint (``HF_ENDPOINT``, else huggingface.co):
when nothing answers, a model in the local Hugging Face cache loads from there in the
hub client's offline mode (no further connection at all, not even its once-a-day
agent-registry fetch), and any other model stops at once with one line naming the model
and the endpoint. ``HF_HUB_OFFLINE=1`` skips the request and uses the cache only.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from clue_core.plugin import MODEL_FILE, ClueError
from clue_models_hf.heads import auto_class

DEFAULT_ENDPOINT = "https://huggingface.co"
#: Seconds the hub probe waits for a connection and for an answer.
PROBE_TIMEOUT = 3.0
_TRUE = ("1", "true", "yes", "on")
#: endpoint -> why it did not answer (None: it answered); one probe per endpoint and process
_PROBED: dict[str, str | None] = {}


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
    """One line for a loading failure; transformers' messages span lines and are kept whole."""
    text = " ".join(line.strip() for line in str(exc).splitlines() if line.strip()) or type(exc).__name__
    if "trust_remote_code" in str(exc):
        return ClueError(f"{source}: this checkpoint runs its own code; pass --set trust_remote_code=true "
                         f"only if you trust it ({text})")
    folder = Path(source).expanduser()
    where = "directory" if folder.exists() else "hub id"
    if where == "directory" and (named := _unreadable_weights(folder)):
        return named
    hint = "" if where == "directory" else " (no network? models download once into the Hugging Face cache)"
    return ClueError(f"cannot load {where} {source!r}: {text}{hint}")


def _unreadable_weights(folder: Path) -> ClueError | None:
    """The first ``*.safetensors`` file of a folder whose header does not read, named: safetensors
    says "Error while deserializing header" but not which file (a copy cut short, usually)."""
    try:
        from safetensors import safe_open
    except ImportError:
        return None
    for path in sorted(folder.glob("*.safetensors")) if folder.is_dir() else ():
        try:
            with safe_open(str(path), framework="pt"):
                pass
        except Exception as exc:  # SafetensorError is no OSError; an OSError reading it counts the same
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            return ClueError(f"{path}: not a readable safetensors file ({reason}); copy or save the model again")
    return None


def hub_endpoint() -> str:
    return (os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")


def offline_mode() -> bool:
    """``HF_HUB_OFFLINE`` (or transformers' older ``TRANSFORMERS_OFFLINE``) is set."""
    return any(os.environ.get(name, "").strip().lower() in _TRUE for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))


def probe_hub(endpoint: str, timeout: float = PROBE_TIMEOUT) -> str | None:
    """None if ``endpoint`` answers one HTTP request (any status), else the reason it did not.

    One request through the environment's proxy settings, as the hub client makes them;
    no retries.
    """
    import http.client
    import urllib.error
    import urllib.request

    request = urllib.request.Request(f"{endpoint}/", method="HEAD", headers={"User-Agent": "clue-models-hf"})
    try:
        with urllib.request.urlopen(request, timeout=timeout):
            return None
    except urllib.error.HTTPError:
        return None  # an answer, whatever its status: the hub is there
    except urllib.error.URLError as exc:
        return _reason(exc.reason)
    except (OSError, http.client.HTTPException, ValueError) as exc:
        return _reason(exc)


def _reason(exc: object) -> str:
    text = str(exc).strip()
    return text or type(exc).__name__


def in_cache(repo_id: str) -> bool:
    """Whether the Hugging Face cache holds ``repo_id``'s configuration (no network involved)."""
    from huggingface_hub import try_to_load_from_cache

    try:
        return isinstance(try_to_load_from_cache(repo_id, "config.json"), str)
    except Exception:  # an id the hub client refuses (HFValidationError): not cached
        return False


def hub_access(source: str, log: Callable[[str], None]) -> bool:
    """For a hub id: whether to load from the local cache only; a ClueError when it cannot load.

    Local directories return False without any check of the network.
    """
    if Path(source).expanduser().is_dir():
        return False
    if offline_mode():
        if in_cache(source):
            return True
        raise ClueError(f"cannot load hub id {source!r}: HF_HUB_OFFLINE is set and it is not in the local Hugging "
                        f"Face cache")
    endpoint = hub_endpoint()
    if endpoint not in _PROBED:
        _PROBED[endpoint] = probe_hub(endpoint)
    reason = _PROBED[endpoint]
    if reason is None:
        return False
    if in_cache(source):
        log(f"the Hugging Face hub at {endpoint} is unreachable ({reason}); loading {source} from the local cache")
        return True
    raise ClueError(f"cannot load hub id {source!r}: the Hugging Face hub at {endpoint} is unreachable ({reason}) "
                    f"and the model is not in the local Hugging Face cache; download it once with network (models "
                    f"stay in the cache) or pass hf:<local directory>")


@contextmanager
def hub_offline(active: bool) -> Iterator[None]:
    """The hub client's offline mode while loading (``local_files_only`` alone still lets
    huggingface_hub fetch its agent registry once per process)."""
    if not active:
        yield
        return
    from huggingface_hub import constants

    before = constants.HF_HUB_OFFLINE
    constants.HF_HUB_OFFLINE = True
    try:
        yield
    finally:
        constants.HF_HUB_OFFLINE = before


def check_source(source: str) -> None:
    """Refuse a local path that is no model folder before anything runs (transformers would take an
    existing folder for the model and fail at the tokenizer with a message of several lines)."""
    path = Path(source).expanduser()
    looks_local = source.startswith((".", "/", "~")) or (os.sep in source.strip("/") and path.exists())
    if looks_local and not path.is_dir():
        what = "a file, not a model directory" if path.exists() else "no such model directory"
        raise ClueError(f"{source}: {what}; pass the model/ folder of an earlier run, a save_pretrained folder "
                        f"or a hub id")
    if path.is_dir() and not (path / "config.json").is_file():
        raise ClueError(f"{source}: not a model directory (no config.json); pass the model/ folder of an earlier "
                        f"run, a save_pretrained folder or a hub id")


def load_tokenizer(source: str, trust_remote_code: bool, local_only: bool = False) -> Any:
    """AutoTokenizer; falls back to BERT's tokenizer for checkpoints that ship only ``vocab.txt``.

    (CLUE's ALBERT models pair an ALBERT encoder with a BERT vocabulary, which
    AutoTokenizer would otherwise try to read as SentencePiece.)
    """
    from transformers import AutoTokenizer, BertTokenizer

    check_source(source)
    try:
        with hub_offline(local_only):
            tokenizer = AutoTokenizer.from_pretrained(source, trust_remote_code=trust_remote_code,
                                                      local_files_only=local_only)
    except Exception as exc:  # transformers raises OSError, ValueError, KeyError... for bad checkpoints
        vocab = Path(source).expanduser() / "vocab.txt"
        if not vocab.is_file():
            raise _explain(source, exc) from None
        tokenizer = BertTokenizer(vocab_file=str(vocab))
    if tokenizer.pad_token_id is None:
        raise ClueError(f"{source}: the tokenizer has no padding token")
    return tokenizer


def load_head(source: str, kind: str, labels: Sequence[str], trust_remote_code: bool, local_only: bool = False
              ) -> Any:
    """The task head for ``kind`` on top of ``source``'s encoder (head freshly initialised if new)."""
    from transformers import AutoConfig

    check_source(source)
    try:
        with hub_offline(local_only):
            config = AutoConfig.from_pretrained(source, trust_remote_code=trust_remote_code,
                                                local_files_only=local_only)
    except Exception as exc:
        raise _explain(source, exc) from None
    options: dict[str, Any] = {"local_files_only": local_only}
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
        with hub_offline(local_only):
            return auto_class(kind).from_pretrained(source, config=config, trust_remote_code=trust_remote_code,
                                                    **options)
    except Exception as exc:
        raise _explain(source, exc) from None
