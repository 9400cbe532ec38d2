"""The result cache: whole entries only, shared by processes, keyed by the model's identity."""

from __future__ import annotations

import json
import multiprocessing
import sqlite3
from pathlib import Path

import pytest

from clue_core.plugin import ClueError
from clue_models_llm.cache import ResultCache, entry_key
from clue_models_llm.loading import folder_digest

IDENTITY = json.dumps({"source": "folder", "sha256": "abc"})


def test_entries_survive_the_process_and_count_hits(tmp_path: Path) -> None:
    cache = ResultCache(tmp_path, IDENTITY)
    key = entry_key({"model": "m"}, {"prompt": "问题", "choices": ["是", "否"]})
    assert cache.get_many([key]) == {}
    cache.put_many({key: {"logprobs": [-1.5, -2.0]}})
    cache.close()
    again = ResultCache(tmp_path, IDENTITY)
    assert again.get_many([key, "missing"]) == {key: {"logprobs": [-1.5, -2.0]}}
    assert again.stats()["hits"] == 1 and again.stats()["misses"] == 1
    other = ResultCache(tmp_path, json.dumps({"source": "folder", "sha256": "def"}))
    assert other.get_many([key]) == {} and other.path != again.path


def test_keys_depend_on_every_part() -> None:
    base = entry_key({"model": "m", "settings": {"mode": "generate"}}, {"prompt": "p"})
    assert base == entry_key({"settings": {"mode": "generate"}, "model": "m"}, {"prompt": "p"})
    assert base != entry_key({"model": "m", "settings": {"mode": "loglikelihood"}}, {"prompt": "p"})
    assert base != entry_key({"model": "m", "settings": {"mode": "generate"}}, {"prompt": "p "})


def test_no_folder_caches_nothing() -> None:
    cache = ResultCache(None, IDENTITY)
    cache.put_many({"k": 1})
    assert not cache.enabled and cache.get_many(["k"]) == {} and cache.stats()["path"] is None


def _writer(folder: str, worker: int) -> None:
    cache = ResultCache(Path(folder), IDENTITY)
    for batch in range(20):
        cache.put_many({f"{worker}-{batch}-{i}": {"worker": worker, "payload": "字" * 200} for i in range(10)})
    cache.close()


def test_two_processes_write_one_file(tmp_path: Path) -> None:
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_writer, args=(str(tmp_path), w)) for w in range(2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(120)
        assert worker.exitcode == 0
    (path,) = (tmp_path / "llm").glob("*.sqlite")
    with sqlite3.connect(path) as connection:
        rows = connection.execute("SELECT key, value FROM results").fetchall()
    assert len(rows) == 400 and all(json.loads(value)["payload"] == "字" * 200 for _, value in rows)


def test_a_folder_retrained_in_place_is_another_model(tmp_path: Path) -> None:
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    (folder / "model.safetensors").write_bytes(b"weights v1")
    first = folder_digest(folder)
    (folder / "model.safetensors").write_bytes(b"weights v2")
    assert folder_digest(folder) != first
    (folder / "model.safetensors").unlink()
    with pytest.raises(ClueError, match="no weight files"):
        folder_digest(folder)
