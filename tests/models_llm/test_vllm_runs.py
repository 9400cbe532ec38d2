"""``vllm:`` end to end through ``clue-core run``, against a stand-in ``vllm`` with vLLM's real output shapes.

The stand-in (:mod:`tests.support.vllm_reference`) answers from the same saved folder that
``llm:`` loads, so the two backends must give the same predictions, log-likelihoods within
1e-4 and the same generated answers; a missing vLLM is one line.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support import vllm_reference

pytestmark = pytest.mark.slow
#: metrics.json's dev scores.
SCORES = "dev"


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture
def stand_in(monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "vllm", vllm_reference.module())
    monkeypatch.setattr(vllm_reference.LLM, "instances", [])
    return vllm_reference.LLM


def run_both(run_cli, tmp_path: Path, memorizer: Path, tasks: tuple[str, ...], *settings: str) -> tuple[Path, Path]:
    outs = []
    for family in ("llm", "vllm"):
        out = tmp_path / family
        extra = [a for s in settings for a in ("--set", s)]
        result = run_cli("run", *tasks, "--model", f"{family}:{memorizer}", "--sample", "-o", out, *extra)
        assert result.exit_code == 0, result.output
        outs.append(out)
    return outs[0], outs[1]


@pytest.mark.parametrize("score", ["sum", "ppl"])
def test_likelihood_matches_llm(run_cli, tmp_path, memorizer, stand_in, score) -> None:
    tasks = ("afqmc", "c3", "tnews")
    llm, vllm = run_both(run_cli, tmp_path, memorizer, tasks, f"score={score}", "shots=2")
    for task in tasks:
        ours, theirs = (read_jsonl(out / task / "predictions" / "dev.jsonl") for out in (vllm, llm))
        assert [r["prediction"] for r in ours] == [r["prediction"] for r in theirs]
        for a, b in zip(ours, theirs):
            assert a["raw"]["prompt"] == b["raw"]["prompt"]
            assert a["raw"]["tokens"] == b["raw"]["tokens"]
            # the memoriser's logits are huge (log-probabilities of -4e2 to -1e7): float32 round-off is ~4e-5 relative
            assert a["raw"]["logprobs"] == pytest.approx(b["raw"]["logprobs"], rel=2e-4, abs=1e-4)
            if score == "ppl":
                assert a["raw"]["prefix_logprob"] == pytest.approx(b["raw"]["prefix_logprob"], rel=2e-4,
                                                                                abs=1e-4)
                assert a["raw"]["prefix_tokens"] == b["raw"]["prefix_tokens"]
        scores = [json.loads((out / task / "metrics.json").read_text())[SCORES] for out in (vllm, llm)]
        assert scores[0] == scores[1]
    info = json.loads((vllm / "afqmc" / "metrics.json").read_text())["model_info"]
    assert info["model"]["engine"] == "vllm" and info["model"]["source"] == "folder"
    assert info["engine"]["traffic"]["cached_tokens"] > 0  # two shots shared by every prompt: read from the cache
    engine = stand_in.instances[-1]
    assert engine.options["enable_prefix_caching"] is True and engine.options["tensor_parallel_size"] == 1


def test_generation_matches_llm(run_cli, tmp_path, memorizer, stand_in) -> None:
    tasks = ("afqmc", "cmrc2018")
    llm, vllm = run_both(run_cli, tmp_path, memorizer, tasks, "mode=generate", "max_new_tokens=16")
    for task in tasks:
        ours, theirs = (read_jsonl(out / task / "predictions" / "dev.jsonl") for out in (vllm, llm))
        assert [r["prediction"] for r in ours] == [r["prediction"] for r in theirs]
        assert [r["raw"]["generation"] for r in ours] == [r["raw"]["generation"] for r in theirs]
        assert [r["raw"]["finish"] for r in ours] == [r["raw"]["finish"] for r in theirs]
        scores = json.loads((vllm / task / "metrics.json").read_text())[SCORES]
        assert scores == json.loads((llm / task / "metrics.json").read_text())[SCORES]
    afqmc = json.loads((vllm / "afqmc" / "metrics.json").read_text())
    assert afqmc["primary"] == 100.0, afqmc[SCORES]  # the memoriser answers every sample example


def test_cache_is_not_shared_with_llm_and_resumes(run_cli, tmp_path, memorizer, stand_in) -> None:
    first = run_cli("run", "afqmc", "--model", f"vllm:{memorizer}", "--sample", "-o", tmp_path / "a")
    assert first.exit_code == 0, first.output
    asked = sum(len(call) for call in stand_in.instances[-1].calls)
    assert asked > 0
    again = run_cli("run", "afqmc", "--model", f"vllm:{memorizer}", "--sample", "-o", tmp_path / "b")
    assert again.exit_code == 0, again.output
    assert sum(len(call) for call in stand_in.instances[-1].calls) == 0  # every answer from the result cache
    other = run_cli("run", "afqmc", "--model", f"llm:{memorizer}", "--sample", "-o", tmp_path / "c")
    info = json.loads((tmp_path / "c" / "afqmc" / "metrics.json").read_text())["model_info"]
    assert other.exit_code == 0 and info["cache"]["hits"] == 0  # llm: never reads vllm:'s answers


def test_missing_vllm_is_one_line(run_cli, tmp_path, memorizer, monkeypatch) -> None:
    monkeypatch.setitem(__import__("sys").modules, "vllm", None)  # import vllm raises ImportError
    result = run_cli("run", "afqmc", "--model", f"vllm:{memorizer}", "--sample", "-o", tmp_path / "out")
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert lines[-1].endswith("vllm: models need vLLM (a GPU and its own torch): pip install "
                              "'clue-models-llm[vllm]'"), result.output
    assert "Traceback" not in result.output
    assert not (tmp_path / "out" / "afqmc" / "metrics.json").exists()


def test_bad_arguments_stop_before_loading(run_cli, tmp_path, stand_in) -> None:
    missing = run_cli("run", "afqmc", "--model", f"vllm:{tmp_path / 'nowhere'}", "--sample", "-o", tmp_path / "o")
    assert missing.exit_code == 2 and "no such model folder" in missing.output
    bare = run_cli("run", "afqmc", "--model", "vllm:", "--sample", "-o", tmp_path / "p")
    assert bare.exit_code == 2 and "needs an argument after 'vllm:'" in bare.output
    assert stand_in.instances == []
