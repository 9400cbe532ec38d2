"""The corpus, tokenized once into flat token files, and the packed sequences read from them.

Segmenting and tokenizing the corpus costs far more than a training step of a small
model, and a run reads its data more than once (epochs, resumes), so ``pretrain`` does it
once, streaming, into ``OUT/data/``:

* ``train.tokens`` and ``eval.tokens``: every document's tokens, each document followed
  by ``[SEP]``, as one flat array of unsigned integers; the top bit of a value says "this
  token continues the word before it" (whole-word masking), the rest is the token id;
* ``index.json``: the files done so far and where their tokens end, the token width and
  the tokenizer; written after every file, so a killed preparation goes on from the last
  finished file (a longer token file is cut back to what the index records).

Training sequences are cut from the flat array, ``[CLS]`` + ``max_length - 2`` tokens +
``[SEP]``, across document boundaries (documents packed into full-length sequences, with
no padding at all); the tail that does not fill a sequence is not trained on. Sequence
``i`` is a pure function of the files and ``i``, so a batch order from ``(seed, epoch)``
and a per-sequence mask seed make a resumed run see exactly what an uninterrupted one does.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from clue_core.plugin import ClueError, write_json
from clue_models_hf.corpus import held_out, iter_parts, relative_name

INDEX = "index.json"
TRAIN, EVAL = "train.tokens", "eval.tokens"
#: 2: every file's entry records its size and modification time (a changed corpus is refused).
FORMAT = 2


def file_stamp(path: Path) -> list[int]:
    """Size and modification time: what tells a file changed since it was tokenized."""
    info = Path(path).stat()
    return [info.st_size, info.st_mtime_ns]


def _changed(names: Sequence[str], stamps: Sequence[list[int]], recorded: Sequence[list[Any]],
             complete: bool) -> str | None:
    """Why the corpus is not the one ``recorded`` was tokenized from, or None when it is."""
    for position, entry in enumerate(recorded):
        if position >= len(names) or names[position] != entry[0]:
            return f"{entry[0]} is gone or another file sorts before it"
        if stamps[position] != list(entry[3:5]):
            return f"{entry[0]} changed (size or modification time)"
    if complete and len(names) > len(recorded):
        return f"{names[len(recorded)]} is new"
    return None


def token_dtype(vocab_size: int) -> tuple[np.dtype, int]:
    """The narrowest unsigned type with a spare top bit for the continuation flag, and that bit."""
    if vocab_size <= 1 << 15:
        return np.dtype(np.uint16), 1 << 15
    return np.dtype(np.uint32), 1 << 31


def encode_file(path: Path, relative: str, encoder: Any, sep_id: int, eval_share: float, flag: int,
                dtype: np.dtype) -> tuple[np.ndarray, np.ndarray, int, int]:
    """(train values, eval values, train documents, eval documents) of one file."""
    parts: dict[bool, list[np.ndarray]] = {False: [], True: []}
    counts = {False: 0, True: 0}
    sep = np.array([sep_id], dtype)
    tokens = 0  # of the document being read (it may come in several parts)
    for index, sentences, end in iter_parts(path):
        ids, continues = encoder.encode(sentences)
        side = held_out(relative, index, eval_share)
        if len(ids):
            parts[side].append(ids.astype(dtype) | np.where(continues, flag, 0).astype(dtype))
            tokens += len(ids)
        if end and tokens:
            parts[side].append(sep)
            counts[side] += 1
        if end:
            tokens = 0
    joined = [np.concatenate(parts[s]) if parts[s] else np.zeros(0, dtype) for s in (False, True)]
    return joined[0], joined[1], counts[False], counts[True]


_WORKER: dict[str, Any] = {}


def _init_worker(tokenizer_dir: str, whole_words: bool) -> None:
    from transformers import AutoTokenizer

    from clue_models_hf.wwm import WordEncoder

    _WORKER["encoder"] = WordEncoder(AutoTokenizer.from_pretrained(tokenizer_dir), whole_words)


def _encode_in_worker(job: tuple[str, str, int, float, int, str]) -> tuple[np.ndarray, np.ndarray, int, int]:
    path, relative, sep_id, share, flag, dtype = job
    return encode_file(Path(path), relative, _WORKER["encoder"], sep_id, share, flag, np.dtype(dtype))


class TokenCache:
    """``OUT/data``: builds (resumably) and opens the flat token files."""

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)

    @property
    def index_path(self) -> Path:
        return self.directory / INDEX

    def read_index(self) -> dict[str, Any] | None:
        if not self.index_path.is_file():
            return None
        return json.loads(self.index_path.read_text(encoding="utf-8"))

    def build(self, root: Path, files: Sequence[Path], encoder: Any, tokenizer_dir: Path, eval_share: float,
              workers: int, log: Callable[[str], None], progress: Callable[[int, int], Any]) -> dict[str, Any]:
        """Tokenize every file not yet done; returns the index."""
        tokenizer = encoder.tokenizer
        dtype, flag = token_dtype(len(tokenizer))
        names = [relative_name(root, p) for p in files]
        stamps = [file_stamp(p) for p in files]
        index = self.read_index()
        wanted = {"format": FORMAT, "eval_share": eval_share, "whole_words": encoder.whole_words,
                  "vocab_size": len(tokenizer), "dtype": dtype.name, "flag": flag}
        if index is not None and {k: index.get(k) for k in wanted} != wanted:
            raise ClueError(f"{self.directory}: tokenized with other settings or files than this run; "
                            f"pass --overwrite to start again")
        if index is not None and (why := _changed(names, stamps, index["files"], index["complete"])):
            raise ClueError(f"{self.directory}: the corpus changed since it was tokenized ({why}); training on "
                            f"it would not continue the same run: pass --overwrite to tokenize it again")
        if index is None:
            self.directory.mkdir(parents=True, exist_ok=True)
            index = {**wanted, "files": [], "train_tokens": 0, "eval_tokens": 0, "train_documents": 0,
                     "eval_documents": 0, "complete": False}
        done = len(index["files"])
        if index["complete"] and done == len(names):
            return index
        train_file, eval_file = self.directory / TRAIN, self.directory / EVAL
        for path, key in ((train_file, "train_tokens"), (eval_file, "eval_tokens")):
            with open(path, "ab") as handle:  # cut back a file a kill left longer than the index says
                handle.truncate(index[key] * dtype.itemsize)
        log(f"tokenizing {len(names) - done} of {len(names)} files into {self.directory}"
            + (" (whole-word segmentation with jieba)" if encoder.whole_words else ""))
        todo = list(range(done, len(names)))
        bar = progress(len(todo), done)
        started = time.perf_counter()
        sep_id = tokenizer.sep_token_id
        if workers > 1 and len(todo) > 1:
            jobs = [(str(files[i]), names[i], sep_id, eval_share, flag, dtype.name) for i in todo]
            pool = ProcessPoolExecutor(workers, initializer=_init_worker, initargs=(str(tokenizer_dir),
                                                                                  encoder.whole_words))
            results = pool.map(_encode_in_worker, jobs, chunksize=1)
        else:
            pool = None
            results = (encode_file(files[i], names[i], encoder, sep_id, eval_share, flag, dtype) for i in todo)
        try:
            with open(train_file, "ab") as train_out, open(eval_file, "ab") as eval_out:
                for i, (train, held, n_train, n_eval) in zip(todo, results):
                    train_out.write(train.tobytes())
                    eval_out.write(held.tobytes())
                    train_out.flush()
                    eval_out.flush()
                    index["train_tokens"] += len(train)
                    index["eval_tokens"] += len(held)
                    index["train_documents"] += n_train
                    index["eval_documents"] += n_eval
                    index["files"].append([names[i], index["train_tokens"], index["eval_tokens"], *stamps[i]])
                    write_json(self.index_path, index)
                    bar.update(1)
        finally:
            bar.close()
            if pool is not None:
                pool.shutdown(cancel_futures=True)
        index["complete"] = True
        write_json(self.index_path, index)
        seconds = time.perf_counter() - started
        log(f"tokenized {index['train_tokens'] + index['eval_tokens']} tokens ({index['train_documents']} training "
            f"and {index['eval_documents']} held-out documents) in {seconds:.1f} s")
        return index

    def tokens(self, which: str) -> np.ndarray:
        index = self.read_index()
        if index is None or not index.get("complete"):
            raise ClueError(f"{self.directory}: the tokenized corpus is incomplete")
        count = index["train_tokens" if which == TRAIN else "eval_tokens"]
        if not count:
            return np.zeros(0, np.dtype(index["dtype"]))
        return np.memmap(self.directory / which, dtype=np.dtype(index["dtype"]), mode="r", shape=(count,))


class PackedSequences:
    """Sequence ``i``: ``[CLS]`` + tokens ``[i·w, (i+1)·w)`` of the flat array + ``[SEP]`` (``w = length - 2``).

    ``partial=True`` keeps a last, shorter sequence (evaluation on a small held-out share);
    items are dicts of numpy arrays: ``ids``, ``continues`` and the sequence ``index``.
    """

    def __init__(self, values: np.ndarray, flag: int, length: int, cls_id: int, sep_id: int,
                 partial: bool = False, limit: int | None = None) -> None:
        self.values, self.flag, self.width = values, flag, length - 2
        self.cls_id, self.sep_id = cls_id, sep_id
        count = len(values) // self.width + (1 if partial and len(values) % self.width else 0)
        self.count = min(count, limit) if limit is not None else count

    def __len__(self) -> int:
        return self.count

    def __getitem__(self, i: int) -> dict[str, Any]:
        if not 0 <= i < self.count:
            raise IndexError(i)
        chunk = np.asarray(self.values[i * self.width:(i + 1) * self.width]).astype(np.int64)
        ids = np.concatenate(([self.cls_id], chunk & (self.flag - 1), [self.sep_id]))
        continues = np.concatenate(([False], (chunk & self.flag) != 0, [False]))
        return {"ids": ids, "continues": continues, "index": i}
