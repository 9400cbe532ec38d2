"""Faults of the LLM plugin (issue 18): each one line, exit code 2, nothing half-written.

A corrupt ``tokenizer.json``; a result cache that is damaged, holds values that are not
JSON or entries of another shape, or lies in a folder that cannot be written; a server
whose 200 answer is truncated JSON or JSON of another shape; a ``mode=auto`` probe that
was refused while the server did not serve the model; few-shot demos a task cannot draw.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from clue_core.plugin import ClueError, RunContext
from clue_models_llm.cache import ResultCache

IDENTITY = json.dumps({"source": "folder", "sha256": "abc"})
WAYS_OUT = ("--cache", "result_cache=false")


def one_line_error(result, *names: str) -> str:
    """The run failed with exit 2 and one ``error:`` line naming every one of ``names``."""
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    last = result.output.strip().splitlines()[-1]
    assert last.startswith("error: "), result.output
    for name in names:
        assert name in last, (name, last)
    return last


def metrics(run: Path) -> dict:
    return json.loads((run / "metrics.json").read_text(encoding="utf-8"))


def tiny_run(run_cli, out: Path, cache: Path, *more: str):
    return run_cli("run", "afqmc", "--model", "llm-tiny", "--sample", "-o", out, "--cache", cache, *more)


def only_sqlite(cache: Path) -> Path:
    (path,) = (cache / "llm").glob("*.sqlite")
    return path


# -- M3: a corrupt tokenizer.json -------------------------------------------------------------


def corrupt_tokenizer_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").write_text('{"model_type": "llama"}', encoding="utf-8")
    (folder / "tokenizer.json").write_text('{"version": "1.0", "trunc', encoding="utf-8")
    return folder


def test_a_corrupt_tokenizer_json_is_one_clueerror_naming_it(tmp_path) -> None:
    from clue_models_llm.loading import load_tokenizer

    folder = corrupt_tokenizer_folder(tmp_path)
    with pytest.raises(ClueError) as caught:
        load_tokenizer(str(folder), "", False)
    assert str(caught.value).startswith(f"{folder / 'tokenizer.json'}:1: not valid JSON")


def test_a_corrupt_tokenizer_config_is_named_not_the_tokenizer_json_beside_it(tmp_path) -> None:
    from clue_models_llm.loading import load_tokenizer
    from clue_models_llm.tiny import build_tokenizer

    folder = tmp_path / "model"
    build_tokenizer(["是否相同"]).save_pretrained(folder)
    (folder / "config.json").write_text('{"model_type": "llama"}', encoding="utf-8")
    (folder / "tokenizer_config.json").write_text('{"model_max_length": 4\n, "x": }', encoding="utf-8")
    with pytest.raises(ClueError) as caught:
        load_tokenizer(str(folder), "", False)
    assert str(caught.value).startswith(f"{folder / 'tokenizer_config.json'}:2: not valid JSON")


def test_a_run_on_a_folder_with_a_corrupt_tokenizer_json_is_one_line(run_cli, tmp_path) -> None:
    folder = corrupt_tokenizer_folder(tmp_path)
    result = run_cli("run", "afqmc", "--model", f"llm:{folder}", "--sample", "-o", tmp_path / "out",
                     "--cache", tmp_path / "cache")
    one_line_error(result, str(folder / "tokenizer.json"))
    assert not (tmp_path / "out").exists()


# -- M4 / L6: the result cache ----------------------------------------------------------------


def test_a_value_that_is_not_json_or_of_the_wrong_shape_is_a_miss_and_is_replaced(tmp_path) -> None:
    cache = ResultCache(tmp_path, IDENTITY)
    cache.put_many({"good": {"text": "是"}, "shape": {"other": 1}})
    cache.close()
    with sqlite3.connect(only_sqlite(tmp_path)) as connection:
        connection.execute("INSERT INTO results VALUES ('garbled', '{\"text\": \"是')")
    again = ResultCache(tmp_path, IDENTITY)
    found = again.get_many(["good", "shape", "garbled"], valid=lambda key, value: "text" in value)
    assert found == {"good": {"text": "是"}}
    assert again.stats()["hits"] == 1 and again.stats()["misses"] == 2
    again.put_many({"garbled": {"text": "否"}})
    assert again.get_many(["garbled"]) == {"garbled": {"text": "否"}}


def flip_results_pages(path: Path) -> None:
    """Break the page header of the results table and its key index (the model table stays whole)."""
    with sqlite3.connect(path) as connection:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # every page in the main file
        page_size = connection.execute("PRAGMA page_size").fetchone()[0]
        roots = [row[0] for row in connection.execute(
            "SELECT rootpage FROM sqlite_master WHERE tbl_name = 'results' AND rootpage > 1")]
    connection.close()
    data = bytearray(path.read_bytes())
    for root in roots:
        data[(root - 1) * page_size] ^= 0xFF
    path.write_bytes(bytes(data))


def test_a_damaged_cache_file_names_itself_and_the_ways_out(tmp_path) -> None:
    cache = ResultCache(tmp_path, IDENTITY)
    cache.put_many({f"k{i}": {"text": "是" * 50} for i in range(50)})
    cache.close()
    path = only_sqlite(tmp_path)
    flip_results_pages(path)
    damaged = ResultCache(tmp_path, IDENTITY)
    with pytest.raises(ClueError) as caught:
        damaged.get_many(["k1"])
    assert str(path) in str(caught.value) and all(way in str(caught.value) for way in WAYS_OUT)
    path.write_bytes(b"not a database at all" * 300)
    with pytest.raises(ClueError) as caught:
        ResultCache(tmp_path, IDENTITY)
    assert str(path) in str(caught.value) and all(way in str(caught.value) for way in WAYS_OUT)


def test_a_folder_the_cache_cannot_be_written_in_names_the_ways_out(tmp_path, monkeypatch) -> None:
    def unable(*args, **kwargs):
        raise sqlite3.OperationalError("unable to open database file")

    monkeypatch.setattr("clue_models_llm.cache.sqlite3.connect", unable)
    with pytest.raises(ClueError) as caught:
        ResultCache(tmp_path, IDENTITY)
    assert "unable to open database file" in str(caught.value)
    assert all(way in str(caught.value) for way in WAYS_OUT)


def test_a_full_disk_while_storing_names_the_ways_out(tmp_path, monkeypatch) -> None:
    cache = ResultCache(tmp_path, IDENTITY)

    def full(*args, **kwargs):
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(cache, "_retry", full)
    with pytest.raises(ClueError) as caught:
        cache.put_many({"k": {"text": "是"}})
    assert str(cache.path) in str(caught.value) and all(way in str(caught.value) for way in WAYS_OUT)


def test_a_run_over_bad_cache_entries_recomputes_and_replaces_them(run_cli, tmp_path) -> None:
    cache = tmp_path / "cache"
    first = tiny_run(run_cli, tmp_path / "a", cache)
    assert first.exit_code == 0, first.output
    path = only_sqlite(cache)
    with sqlite3.connect(path) as connection:
        keys = [row[0] for row in connection.execute("SELECT key FROM results ORDER BY key")]
        connection.execute("UPDATE results SET value = '{\"logprobs\": [1' WHERE key = ?", (keys[0],))
        connection.execute("UPDATE results SET value = '{\"text\": \"x\"}' WHERE key = ?", (keys[1],))
        connection.execute("UPDATE results SET value = '{\"logprobs\": [0.5], \"tokens\": [1]}' WHERE key = ?",
                           (keys[2],))
    connection.close()
    second = tiny_run(run_cli, tmp_path / "b", cache)
    assert second.exit_code == 0, second.output
    info = metrics(tmp_path / "b" / "afqmc")["model_info"]["cache"]
    assert info["misses"] == 3 and info["written"] == 3
    assert metrics(tmp_path / "b" / "afqmc")["dev"] == metrics(tmp_path / "a" / "afqmc")["dev"]
    third = tiny_run(run_cli, tmp_path / "c", cache)
    assert metrics(tmp_path / "c" / "afqmc")["model_info"]["cache"]["misses"] == 0, third.output


def test_a_run_over_a_damaged_cache_is_one_line_and_writes_nothing(run_cli, tmp_path) -> None:
    cache = tmp_path / "cache"
    assert tiny_run(run_cli, tmp_path / "a", cache).exit_code == 0
    path = only_sqlite(cache)
    flip_results_pages(path)
    for _ in range(2):  # refused again, not "repaired" into something else
        result = tiny_run(run_cli, tmp_path / "b", cache)
        one_line_error(result, str(path), "delete that file", *WAYS_OUT)
        assert not (tmp_path / "b").exists()
    path.unlink()  # the way out the line names first
    again = tiny_run(run_cli, tmp_path / "b", cache)
    assert again.exit_code == 0, again.output
    assert metrics(tmp_path / "b" / "afqmc")["dev"] == metrics(tmp_path / "a" / "afqmc")["dev"]


def test_a_run_whose_cache_folder_cannot_be_written_is_one_line(run_cli, tmp_path, monkeypatch) -> None:
    def unable(*args, **kwargs):
        raise sqlite3.OperationalError("unable to open database file")

    monkeypatch.setattr("clue_models_llm.cache.sqlite3.connect", unable)
    result = tiny_run(run_cli, tmp_path / "out", tmp_path / "cache")
    one_line_error(result, "unable to open database file", *WAYS_OUT)
    assert not (tmp_path / "out").exists()
    monkeypatch.undo()
    assert tiny_run(run_cli, tmp_path / "out", tmp_path / "cache", "--set", "result_cache=false").exit_code == 0


# -- M5: a server whose 200 answer is not what it should be -----------------------------------


TRUNCATED = b'{"id": "cmpl-1", "object": "text_completion", "choices": [{"index": 0, "te'


def test_a_truncated_json_answer_is_retried_then_one_clueerror(answering) -> None:
    from clue_models_llm import client as client_module
    from clue_models_llm.client import ServerClient

    url, handler = answering(TRUNCATED)
    client_module.BACKOFF, saved = 0.01, client_module.BACKOFF
    try:
        client = ServerClient(base_url=url, model="m", api_key_env="", concurrency=1, rpm=0, timeout=5, retries=1)
        with pytest.raises(ClueError, match="not valid JSON") as caught:
            client.call("completions", {"prompt": "x", "max_tokens": 1})
    finally:
        client_module.BACKOFF = saved
    assert "gave up after 2 attempts" in str(caught.value)
    assert handler.posts == 2 and client.traffic.retries == {"invalid JSON": 1}


@pytest.mark.parametrize("body", [TRUNCATED, b'{"choices": ["a"]}', b'{"choices": [{"index": 0, "text": 5}]}',
                                  b'{"choices": [{"index": 0, "text": "x"}], "usage": {"prompt_tokens": "many"}}'])
@pytest.mark.parametrize("mode", ["generate", "loglikelihood"])
def test_a_server_answer_of_the_wrong_shape_is_one_line(run_cli, answering, tmp_path, body, mode) -> None:
    url, _ = answering(body)
    result = run_cli("run", "afqmc", "--model", "openai:tiny", "--set", f"base_url={url}", "--sample",
                     "--set", f"mode={mode}", "--set", "retries=0", "-o", tmp_path / "out",
                     "--cache", tmp_path / "cache")
    one_line_error(result, url)
    assert not (tmp_path / "out").exists()


# -- M6: mode=auto while the server did not serve the model ------------------------------------


def test_auto_does_not_remember_a_probe_refused_while_the_model_was_not_served(granite, tmp_path, run_cli) -> None:
    from tests.support.openai_server import ModelEngine, OpenAIServer

    with OpenAIServer(ModelEngine(granite), model="other") as server:
        args = ("run", "afqmc", "--model", "openai:tiny", "--set", f"base_url={server.url}", "--sample",
                "--cache", tmp_path / "cache")
        down = run_cli(*args, "-o", tmp_path / "down")
        one_line_error(down, "does not serve model 'tiny'")
        assert len(server.requests) >= 1 and not (tmp_path / "down").exists()
        server.model = "tiny"  # the server is fixed
        fixed = run_cli(*args, "-o", tmp_path / "fixed")
    assert fixed.exit_code == 0, fixed.output
    info = metrics(tmp_path / "fixed" / "afqmc")["model_info"]
    assert info["decoding"]["mode"] == "loglikelihood"
    assert "echoes prompt log-probabilities" in info["mode_note"]


def test_auto_falls_back_for_one_run_when_the_probe_is_refused_and_asks_again_next_run(granite, tmp_path,
                                                                                       run_cli) -> None:
    from tests.support.openai_server import ModelEngine, OpenAIServer

    # the probe refused in both shapes (a list of prompts, then one prompt)
    with OpenAIServer(ModelEngine(granite), model="tiny", faults=["400", "400"]) as server:
        args = ("run", "afqmc", "--model", "openai:tiny", "--set", f"base_url={server.url}", "--sample",
                "--set", "max_new_tokens=2", "--cache", tmp_path / "cache")
        refused = run_cli(*args, "-o", tmp_path / "refused")
        assert refused.exit_code == 0, refused.output
        assert metrics(tmp_path / "refused" / "afqmc")["model_info"]["decoding"]["mode"] == "generate"
        again = run_cli(*args, "-o", tmp_path / "again")
    assert again.exit_code == 0, again.output
    assert metrics(tmp_path / "again" / "afqmc")["model_info"]["decoding"]["mode"] == "loglikelihood"


@pytest.fixture(scope="module")
def granite(tmp_path_factory) -> Path:
    from clue_core.kernel import Kernel
    from tests.models_llm.memorizer import sample_pairs
    from tests.support.openai_server import save_tiny_granite

    texts = [prompt + answer for prompt, answer in sample_pairs(Kernel(), ("afqmc",))]
    return save_tiny_granite(tmp_path_factory.mktemp("granite") / "model", texts)


# -- M7: few-shot demos a task cannot draw, known at planning -------------------------------------


def afqmc_learner(kernel, model: str = "llm-tiny", **values):
    from clue_core.specs import resolve as resolve_ref

    spec, argument = kernel.model(model)
    task = kernel.task("afqmc")
    declared = {s.name: s.default for s in spec.settings}
    return resolve_ref(spec.factory)(argument, task, {**declared, **values})


def examples(kernel, split: str) -> list:
    from clue_core.data import sample_dir
    from clue_core.reading import read_split

    task = kernel.task("afqmc")
    return list(read_split(task, sample_dir(task), split).examples)


def test_check_plan_refuses_more_shots_than_labelled_training_examples(kernel) -> None:
    train, dev = examples(kernel, "train"), examples(kernel, "dev")
    learner = afqmc_learner(kernel, shots=len(train) + 1)
    with pytest.raises(ClueError, match=f"shots={len(train) + 1} needs {len(train) + 1} labelled training "
                                        f"examples, the run has {len(train)}"):
        learner.check_plan({"train": train, "dev": dev})
    with pytest.raises(ClueError, match="the run has 0"):
        learner.check_plan({"dev": dev})
    afqmc_learner(kernel, shots=len(train)).check_plan({"train": train, "dev": dev})
    afqmc_learner(kernel, shots=0).check_plan({"dev": dev})


def test_check_plan_counts_only_labelled_examples_for_the_server_learner_too(kernel) -> None:
    import dataclasses

    train = examples(kernel, "train")
    unlabelled = [dataclasses.replace(example, label=None) for example in train]
    learner = afqmc_learner(kernel, "openai:tiny", shots=2, base_url="http://127.0.0.1:9/v1")
    learner.check_plan({"train": train[:2]})
    with pytest.raises(ClueError, match="the run has 1"):
        learner.check_plan({"train": [train[0], *unlabelled]})
    with pytest.raises(ClueError):  # draw_demos keeps its own check
        learner.fit(unlabelled, [], RunContext(task=kernel.task("afqmc")))
