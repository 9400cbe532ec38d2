"""``clue-core pretrain``: masked-LM pre-training of an encoder on a CLUECorpus2020-style folder.

Order of work, so that a mistake costs nothing: settings and ``--model`` are checked, the
corpus is checked file by file (bad files named, refused or skipped), the output folder
is checked (a non-empty one only with ``--resume`` or ``--overwrite``) — all before
anything is written. Then the corpus is tokenized once into ``OUT/data`` (resumable per
file), the model trains in :class:`~clue_models_hf.pretrain_loop.PretrainLoop` with
checkpoints in ``OUT/training``, and the end writes ``OUT/model`` (a ``save_pretrained``
folder that ``clue-core run --model hf:OUT/model`` fine-tunes) and ``OUT/metrics.json``.

``OUT/pretrain.json`` records the model, the corpus, the seed and every setting;
``--resume`` refuses to continue with other values of those that change what is trained.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from clue_core.plugin import MAX_SEED, ClueError, write_json
from clue_models_hf import corpus
from clue_models_hf.pretrain_settings import PretrainSettings, resolve, schedule_names

RUN_FILE, METRICS_FILE, LOCK = "pretrain.json", "metrics.json", ".pretrain.lock"
SCHEMA = "clue-models-hf/pretrain@1"
DATA, TRAINING, MODEL = "data", "training", "model"
#: Everything a run writes into OUT: ``--overwrite`` removes these and nothing else.
OURS = (RUN_FILE, METRICS_FILE, DATA, TRAINING, MODEL, f".{MODEL}.tmp")


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def check_output(output: Path, record: dict[str, Any], resume: bool, overwrite: bool) -> None:
    """Refuse to touch a folder the user did not ask to reuse; see the module doc."""
    if resume and overwrite:
        raise ClueError("--resume and --overwrite exclude each other")
    if output.exists() and not output.is_dir():
        raise ClueError(f"{output}: exists and is not a folder")
    if not output.exists() or not any(p.name != LOCK for p in output.iterdir()):
        return
    run_file = output / RUN_FILE
    before = _run_record(run_file)
    if before is None:
        raise ClueError(f"{output}: exists, is not empty and is no pre-training output (no {RUN_FILE} written by "
                        f"clue-core pretrain); pass a new folder")
    if overwrite:
        return
    if not resume:
        raise ClueError(f"{output}: holds a pre-training run; pass --resume to continue it or --overwrite to "
                        f"start again")
    for key in ("model", "corpus", "seed"):
        if before.get(key) != record[key]:
            raise ClueError(f"--resume: {key} was {before.get(key)!r}, now {record[key]!r}; resume with the same "
                            f"one or start again with --overwrite")
    changed = sorted(n for n in schedule_names() & set(record["settings"])
                     if before.get("settings", {}).get(n) != record["settings"][n])
    if changed:
        shown = ", ".join(f"{n} ({before.get('settings', {}).get(n)!r} → {record['settings'][n]!r})"
                          for n in changed)
        raise ClueError(f"--resume: settings that change training differ from the interrupted run: {shown}")


def _run_record(path: Path) -> dict[str, Any] | None:
    """``pretrain.json`` when it is one this command wrote, else None (a user's file of that name)."""
    import json

    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return record if isinstance(record, dict) and record.get("schema") == SCHEMA else None


def check_places(corpus_dir: Path, output: Path) -> None:
    """OUT and the corpus must not hold each other: a run would read its own vocab.txt as text,
    and ``--overwrite`` could remove the corpus."""
    out = output.resolve()
    if out == corpus_dir or out.is_relative_to(corpus_dir):
        raise ClueError(f"{output}: is inside the corpus folder {corpus_dir}; its files would be read as corpus "
                        f"text: pass an output folder elsewhere")
    if corpus_dir.is_relative_to(out):
        raise ClueError(f"{output}: holds the corpus folder {corpus_dir}; pass an output folder elsewhere")


def lock_output(output: Path) -> int:
    """Hold ``OUT/.pretrain.lock`` (``flock``) for the run: a second run on OUT stops in one line
    instead of writing the same files, or ``--overwrite`` removing them, under the first."""
    import fcntl

    output.mkdir(parents=True, exist_ok=True)
    fd = os.open(output / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "?"
        os.close(fd)
        raise ClueError(f"{output}: another clue-core pretrain (process {holder}) is writing there; wait for it "
                        f"to end or pass another folder") from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, str(os.getpid()).encode(), 0)
    return fd


def clear_output(output: Path) -> None:
    """``--overwrite``: remove what a run wrote (:data:`OURS`), never anything else in OUT."""
    for name in OURS:
        path = output / name
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        elif path.exists() or path.is_symlink():
            path.unlink()


def mixed_precision(mode: str) -> str:
    """``auto``: bf16 on a GPU that has it and on CPUs that compute it natively; else no."""
    if mode != "auto":
        return mode
    import torch

    from clue_models_hf.runtime import native_cpu_bf16

    if torch.cuda.is_available():
        return "bf16" if torch.cuda.is_bf16_supported() else "no"
    return "bf16" if native_cpu_bf16() else "no"


def tokenize_workers(requested: int) -> int:
    return requested or max(1, min(8, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                                   else os.cpu_count() or 1))


def pretrain(corpus_dir: Path, model: str, output: Path, pairs: Sequence[str] = (), *, seed: int = 42,
             resume: bool = False, overwrite: bool = False, echo: Callable[[str], None] = _stderr,
             loop_class: Any = None) -> dict[str, Any]:
    """Run one pre-training; returns what ``metrics.json`` holds."""
    from clue_models_hf.pretrain_model import check_length, check_model, parse_model

    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:  # set_seed's traceback
        raise ClueError(f"seed must be a whole number from 0 to {MAX_SEED}, got {seed!r}")  # after OUT was locked
    corpus_dir, output = Path(corpus_dir).resolve(), Path(output)
    kind, _ = parse_model(model)
    values = resolve(pairs, tiny=kind == "tiny")
    settings = PretrainSettings.of(values)
    record = {"schema": SCHEMA, "model": model, "corpus": str(corpus_dir), "seed": seed, "settings": values}
    check_output(output, record, resume, overwrite)
    check_places(corpus_dir, output)
    files = corpus.corpus_files(corpus_dir)
    usable = corpus.usable_files(corpus_dir, files, corpus.check_files(files), settings.bad_files, echo)
    local_only = check_model(model, echo)
    check_length(model, values, local_only)
    # -- nothing was written before this line ---------------------------------------------
    lock = None
    if (os.environ.get("RANK") or "0") == "0":  # the main process (Accelerate's state is made later, once)
        existed = output.exists()
        lock = lock_output(output)
        try:
            check_output(output, record, resume, overwrite)  # again, now that no other run can write there
        except ClueError:
            os.close(lock)
            if not existed:
                shutil.rmtree(output, ignore_errors=True)
            raise
    try:
        return _run(corpus_dir, model, output, values, settings, record, usable, local_only, seed, resume,
                    overwrite, echo, loop_class)
    finally:
        if lock is not None:
            os.close(lock)


def _run(corpus_dir: Path, model: str, output: Path, values: dict[str, Any], settings: PretrainSettings,
         record: dict[str, Any], usable: list[Path], local_only: bool, seed: int, resume: bool, overwrite: bool,
         echo: Callable[[str], None], loop_class: Any) -> dict[str, Any]:
    from accelerate.utils import set_seed

    from clue_models_hf.loading import quiet_transformers
    from clue_models_hf.runtime import make_accelerator

    quiet_transformers()
    precision = mixed_precision(settings.mixed_precision)
    accelerator = make_accelerator(_with(settings, mixed_precision=precision), output / TRAINING)
    main = accelerator.is_main_process
    log = echo if main else (lambda _line: None)
    if main:
        if overwrite:
            clear_output(output)
        output.mkdir(parents=True, exist_ok=True)
        write_json(output / RUN_FILE, record)
    accelerator.wait_for_everyone()
    with accelerator.main_process_first():
        tokenizer, index = _prepare_data(corpus_dir, usable, model, values, output / DATA, local_only, log, main)
    set_seed(seed)
    from clue_models_hf.pretrain_model import build_model

    network = build_model(model, tokenizer, values, local_only)
    return _train(network, tokenizer, index, accelerator, settings, values, record, output, seed, resume, log,
                  loop_class)


def _with(settings: PretrainSettings, **changes: Any) -> PretrainSettings:
    from dataclasses import replace

    return replace(settings, **changes)


def _prepare_data(corpus_dir: Path, files: list[Path], model: str, values: dict[str, Any], data_dir: Path,
                  local_only: bool, log: Callable[[str], None], main: bool) -> tuple[Any, dict[str, Any]]:
    from transformers import AutoTokenizer

    from clue_models_hf.pretrain_data import TokenCache
    from clue_models_hf.pretrain_model import build_tokenizer
    from clue_models_hf.wwm import WordEncoder

    tokenizer_dir = data_dir / "tokenizer"
    if (tokenizer_dir / "tokenizer_config.json").is_file():
        tokenizer = AutoTokenizer.from_pretrained(str(tokenizer_dir))
    else:
        tokenizer = build_tokenizer(model, files, values, local_only)
        if main:
            tokenizer_dir.mkdir(parents=True, exist_ok=True)
            tokenizer.save_pretrained(str(tokenizer_dir))
    cache = TokenCache(data_dir)
    encoder = WordEncoder(tokenizer, values["whole_word_mask"])
    workers = tokenize_workers(values["tokenize_workers"])
    index = cache.build(corpus_dir, files, encoder, tokenizer_dir, values["eval_share"], workers, log,
                        _file_progress(main and values["progress"])) if main else cache.read_index()
    if index is None or not index.get("complete"):
        raise ClueError(f"{data_dir}: the tokenized corpus is incomplete")
    return tokenizer, index


def _file_progress(show: bool) -> Callable[[int, int], Any]:
    def make(total: int, done: int) -> Any:
        from tqdm.auto import tqdm

        return tqdm(total=total, desc="tokenize", unit="file", disable=None if show and sys.stderr.isatty()
                    else True, leave=False)
    return make


def _train(network: Any, tokenizer: Any, index: dict[str, Any], accelerator: Any, settings: PretrainSettings,
           values: dict[str, Any], record: dict[str, Any], output: Path, seed: int, resume: bool,
           log: Callable[[str], None], loop_class: Any) -> dict[str, Any]:
    from clue_models_hf.mlm import EVAL_STREAM, MaskedLMLoss, MaskingCollator
    from clue_models_hf.pretrain_data import EVAL, TRAIN, PackedSequences, TokenCache
    from clue_models_hf.pretrain_loop import PretrainLoop

    cache = TokenCache(output / DATA)
    length = settings.max_length
    ids = (index["flag"], length, tokenizer.cls_token_id, tokenizer.sep_token_id)
    train_set = PackedSequences(cache.tokens(TRAIN), *ids)
    eval_set = PackedSequences(cache.tokens(EVAL), *ids, partial=True, limit=settings.eval_sequences)
    needed = settings.batch_size * accelerator.num_processes
    if len(train_set) < needed:
        raise ClueError(f"the corpus gives {len(train_set)} training sequences of {length} tokens, fewer than one "
                        f"batch ({needed}); lower batch_size or max_length, or add text")
    if not len(eval_set):
        raise ClueError(f"no held-out documents (eval_share={settings.eval_share} of "
                        f"{index['train_documents']} documents); raise eval_share or add documents, then run "
                        f"again with --overwrite")
    module = accelerator.prepare(MaskedLMLoss(network))
    loop = (loop_class or PretrainLoop)(accelerator, module, settings, output / TRAINING, seed, log, resume)
    state = loop.train(train_set, eval_set,
                       MaskingCollator(tokenizer, seed, settings.mlm_probability),
                       MaskingCollator(tokenizer, seed, settings.mlm_probability, stream=EVAL_STREAM))
    metrics = {
        "schema": SCHEMA, "model": record["model"], "corpus": record["corpus"], "seed": seed,
        "eval_loss_first": state.history[0]["eval_loss"], "eval_loss_last": state.history[-1]["eval_loss"],
        "eval_history": state.history, "steps": state.global_step, "train_tokens": state.train_tokens,
        "train_runtime": round(state.train_runtime, 3),
        "tokens_per_second": round(state.train_tokens / state.train_runtime, 1) if state.train_runtime else None,
        "world_size": accelerator.num_processes, "mixed_precision": accelerator.mixed_precision,
        "data": {k: index[k] for k in ("train_tokens", "eval_tokens", "train_documents", "eval_documents")}
        | {"files": len(index["files"]), "train_sequences": len(train_set), "eval_sequences": len(eval_set)},
        "settings": values,
    }
    if accelerator.is_main_process:
        _save_model(accelerator.unwrap_model(module).model, tokenizer, output / MODEL)
        write_json(output / METRICS_FILE, metrics)
        log(f"held-out MLM loss {metrics['eval_loss_first']:.4f} → {metrics['eval_loss_last']:.4f}; "
            f"{metrics['tokens_per_second'] or 0:,.0f} tokens/s; model in {output / MODEL}")
    accelerator.wait_for_everyone()
    return metrics


def _save_model(model: Any, tokenizer: Any, target: Path) -> None:
    """``save_pretrained`` into a staging folder, renamed into place when complete."""
    from clue_models_hf.saving import disk_errors, share_weights

    staging = target.parent / f".{target.name}.tmp"
    shutil.rmtree(staging, ignore_errors=True)
    try:
        with disk_errors(staging / "model.safetensors"):
            model.save_pretrained(str(staging))
            tokenizer.save_pretrained(str(staging))
    except OSError:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    share_weights(staging)
    shutil.rmtree(target, ignore_errors=True)
    staging.rename(target)
