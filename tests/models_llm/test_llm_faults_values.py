"""Faults of the LLM plugin found by review (issue 18, round 2): values no model can give.

A cached or served log-probability that is NaN, infinite or positive, a token count below
zero, a token count too large for an integer, a probe answered with no choices, a
tokenizer_config.json that is JSON but not an object, weights that are not safetensors:
each is a miss (the cache) or one line naming its source, never a NaN in the predictions,
a traceback, a remembered probe or a message that blames another file.
"""

from __future__ import annotations

import json
import math
import sqlite3
from pathlib import Path

import pytest

from clue_core.plugin import ClueError
from clue_models_llm.backends.openai_likelihood import PROBE_PROMPT
from clue_models_llm.entries import likelihood_ok
from tests.models_llm.test_llm_faults import one_line_error, only_sqlite, tiny_run

GOOD = {"logprobs": [-3.5, -1.0], "tokens": [2, 2], "prefix_logprob": -4.0, "prefix_tokens": 3}


@pytest.mark.parametrize("field, value", [("logprobs", [math.nan, -1.0]), ("logprobs", [-math.inf, -1.0]),
                                          ("logprobs", [math.inf, -1.0]), ("logprobs", [10.5, -1.0]),
                                          ("tokens", [-2, 2]), ("prefix_logprob", math.nan),
                                          ("prefix_tokens", -1)])
def test_a_likelihood_no_model_can_give_is_refused(field, value) -> None:
    assert likelihood_ok(GOOD, 2, True)
    assert not likelihood_ok({**GOOD, field: value}, 2, True)


def strict_json(text: str):
    """``json.loads`` that refuses NaN and Infinity, as every other JSON reader does."""
    def refuse(name: str):
        raise ValueError(f"not JSON: {name}")
    return json.loads(text, parse_constant=refuse)


def test_a_cached_nan_is_a_miss_and_never_reaches_the_predictions(run_cli, tmp_path) -> None:
    assert tiny_run(run_cli, tmp_path / "first", tmp_path / "cache").exit_code == 0
    with sqlite3.connect(only_sqlite(tmp_path / "cache")) as connection:
        connection.execute("""UPDATE results SET value = '{"logprobs": [NaN, -1.0], "tokens": [2, 2], '
                              || '"prefix_logprob": null, "prefix_tokens": null, "truncated": 0}'""")
    result = tiny_run(run_cli, tmp_path / "again", tmp_path / "cache")
    assert result.exit_code == 0, result.output
    assert "(0 cached)" in result.output
    for path in (tmp_path / "again" / "afqmc" / "predictions").glob("*.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            strict_json(line)


def completion(token_logprob: str, usage: str = "") -> bytes:
    """An echoed completion of afqmc's two choices whose last token has ``token_logprob``.

    Its text begins with the probe's prompt, so the probe finds an echoing server and the
    scoring request is the one that meets the value.
    """
    choices = ", ".join(f'{{"index": {i}, "text": "{PROBE_PROMPT}b", "finish_reason": "length", '
                        f'"logprobs": {{"tokens": ["a", "b"], "token_logprobs": [null, {token_logprob}], '
                        f'"text_offset": [0, 1]}}}}'
                        for i in range(2))
    return f'{{"id": "c", "object": "text_completion", "choices": [{choices}]{usage}}}'.encode()


@pytest.mark.parametrize("body", [completion("NaN"), completion("-Infinity"), completion("3.5"),
                                  completion("-1.0", ', "usage": {"prompt_tokens": 1e400, "completion_tokens": 1}')])
def test_a_served_likelihood_no_model_can_give_is_one_line(run_cli, answering, tmp_path, body) -> None:
    url, _ = answering(body)
    result = run_cli("run", "afqmc", "--model", "openai:tiny", "--set", f"base_url={url}", "--sample",
                     "--set", "mode=loglikelihood", "--set", "retries=0", "-o", tmp_path / "out",
                     "--cache", tmp_path / "cache")
    one_line_error(result, url, "expected shape")
    assert not (tmp_path / "out").exists()


def test_auto_does_not_remember_a_probe_answered_with_no_choices(run_cli, answering, tmp_path) -> None:
    url, _ = answering(b'{"id": "c", "object": "text_completion", "choices": []}')
    result = run_cli("run", "afqmc", "--model", "openai:tiny", "--set", f"base_url={url}", "--sample",
                     "--set", "retries=0", "-o", tmp_path / "out", "--cache", tmp_path / "cache")
    one_line_error(result, url, "no choices")
    with sqlite3.connect(only_sqlite(tmp_path / "cache")) as connection:
        values = [value for (value,) in connection.execute("SELECT value FROM results")]
    assert not any('"capable"' in value for value in values), values


def tiny_folder(tmp_path: Path) -> Path:
    from clue_models_llm.settings import TINY
    from clue_models_llm.tiny import build_model

    folder = tmp_path / "model"
    model, tokenizer = build_model(["判断两个问题是否相同"], {s.name: s.default for s in TINY}, 0)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def test_a_tokenizer_config_that_is_not_an_object_is_named(tmp_path) -> None:
    from clue_models_llm.loading import load_tokenizer

    folder = tiny_folder(tmp_path)
    (folder / "tokenizer_config.json").write_text("[]", encoding="utf-8")
    with pytest.raises(ClueError) as caught:
        load_tokenizer(str(folder), "", False)
    assert str(caught.value).startswith(f"{folder / 'tokenizer_config.json'}: not a JSON object")


def test_weights_that_are_not_safetensors_are_named(run_cli, tmp_path) -> None:
    folder = tiny_folder(tmp_path)
    weights = folder / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:1000])
    result = run_cli("run", "afqmc", "--model", f"llm:{folder}", "--sample", "-o", tmp_path / "out",
                     "--set", "result_cache=false")
    one_line_error(result, str(weights))
    assert not (tmp_path / "out").exists()
