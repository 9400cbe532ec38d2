"""openai:<model> end to end: runs through the CLI against real servers on 127.0.0.1.

* a vLLM-like server over a local model (tests/support/openai_server.py): likelihoods through
  completions echo + logprobs equal ``llm:`` on the same folder; generation equals it too;
* a scripted server for what a model cannot be made to do: faults, reasoning, tool calls;
* ``transformers serve`` (a real OpenAI-compatible server, in its own process): greedy text
  equals ``llm:``'s greedy text;
* a run killed mid-way (its own process) resumes without repeating a request, counted at the server.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from click.testing import CliRunner

from clue_core.cli import cli
from clue_models_llm.backends.openai_likelihood import PROBE_PROMPTS
from clue_models_llm.extract import cut_at_stop
from tests.models_llm.memorizer import sample_pairs
from tests.support.openai_server import ModelEngine, OpenAIServer, ScriptedEngine, save_tiny_granite

TASKS = ("afqmc", "c3", "cmrc2018")
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def own_home(monkeypatch, tmp_path):
    """Runs that name no ``--cache`` use this test's own."""
    monkeypatch.setenv("CLUE_HOME", str(tmp_path / "clue-home"))


@pytest.fixture(scope="session")
def granite(kernel, tmp_path_factory) -> Path:
    """A tiny random Granite whose character vocabulary covers the three tasks' sample prompts."""
    folder = tmp_path_factory.mktemp("granite") / "model"
    texts = [prompt + answer for prompt, answer in sample_pairs(kernel, TASKS)]
    return save_tiny_granite(folder, texts)


@pytest.fixture(scope="module")
def vllm_like(granite):
    with OpenAIServer(ModelEngine(granite), model="tiny") as server:
        yield server


def run(*args: str, env: dict[str, str] | None = None):
    return CliRunner().invoke(cli, ["run", *args], env=env, catch_exceptions=False)


def records(folder: Path, task: str, split: str = "dev") -> list[dict]:
    path = folder / task / "predictions" / f"{split}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def metrics(folder: Path, task: str) -> dict:
    return json.loads((folder / task / "metrics.json").read_text(encoding="utf-8"))


def served(server: OpenAIServer, *more: str) -> list[str]:
    return ["--model", "openai:tiny", "--set", f"base_url={server.url}", "--sample", *more]


# -- the same model, served and local --------------------------------------------------------


def test_likelihood_through_the_server_equals_llm(vllm_like, granite, tmp_path):
    """The done-when command in likelihood mode: afqmc and c3 scored, cmrc2018 generated."""
    remote = run(*TASKS, *served(vllm_like, "--set", "mode=loglikelihood", "--set", "max_new_tokens=8",
                                 "--set", "price_prompt=2", "--set", "price_completion=10",
                                 "-o", str(tmp_path / "remote"), "--cache", str(tmp_path / "c1")))
    assert remote.exit_code == 0, remote.output
    local = run(*TASKS, "--model", f"llm:{granite}", "--sample", "--set", "max_new_tokens=8",
                "-o", str(tmp_path / "local"), "--cache", str(tmp_path / "c2"))
    assert local.exit_code == 0, local.output
    compared = 0
    for task in ("afqmc", "c3"):
        for ours, theirs in zip(records(tmp_path / "remote", task), records(tmp_path / "local", task), strict=True):
            assert ours["raw"]["tokens"] == theirs["raw"]["tokens"]
            assert ours["raw"]["logprobs"] == pytest.approx(theirs["raw"]["logprobs"], abs=1e-4)
            assert ours["prediction"] == theirs["prediction"]
            compared += len(ours["raw"]["logprobs"])
        assert metrics(tmp_path / "remote", task)["dev"] == metrics(tmp_path / "local", task)["dev"]
    assert compared > 30
    for ours, theirs in zip(records(tmp_path / "remote", "cmrc2018"), records(tmp_path / "local", "cmrc2018")):
        assert ours["prediction"] == theirs["prediction"]
    # token usage and cost, summed from what the server reported for every answer
    info = metrics(tmp_path / "remote", "afqmc")["model_info"]
    usages = [u for record in records(tmp_path / "remote", "afqmc") for u in record["raw"]["usage"]]
    usages += [u for record in records(tmp_path / "remote", "afqmc", "test-1.1") for u in record["raw"]["usage"]]
    prompt_tokens = sum(u["prompt_tokens"] for u in usages)
    completion_tokens = sum(u["completion_tokens"] for u in usages)
    assert info["usage"]["prompt_tokens"] == prompt_tokens > 0
    assert info["usage"]["cost"] == pytest.approx((2 * prompt_tokens + 10 * completion_tokens) / 1e6)
    assert info["decoding"]["mode"] == "loglikelihood"
    assert "eos_token_ids" not in info and "bos" not in info["prompt"]  # nothing a server run does not have


def test_generation_through_the_server_equals_llm(vllm_like, granite, tmp_path):
    """The done-when command in generation mode."""
    settings = ["--set", "mode=generate", "--set", "max_new_tokens=8"]
    remote = run(*TASKS, *served(vllm_like, *settings, "-o", str(tmp_path / "remote"), "--cache", str(tmp_path / "c")))
    assert remote.exit_code == 0, remote.output
    local = run(*TASKS, "--model", f"llm:{granite}", "--sample", *settings, "-o", str(tmp_path / "local"),
                "--cache", str(tmp_path / "c"))
    assert local.exit_code == 0, local.output
    for task in TASKS:
        for ours, theirs in zip(records(tmp_path / "remote", task), records(tmp_path / "local", task), strict=True):
            assert cut_at_stop(ours["raw"]["generation"], ["\n"]) == cut_at_stop(theirs["raw"]["generation"], ["\n"])
            assert ours["prediction"] == theirs["prediction"]


def test_a_finished_run_rescores_without_a_request(vllm_like, tmp_path):
    first = run("afqmc", *served(vllm_like, "-o", str(tmp_path / "a"), "--cache", str(tmp_path / "c")))
    assert first.exit_code == 0, first.output
    before = len(vllm_like.requests)
    again = run("afqmc", *served(vllm_like, "-o", str(tmp_path / "b"), "--cache", str(tmp_path / "c")))
    assert again.exit_code == 0, again.output
    assert len(vllm_like.requests) == before
    assert records(tmp_path / "a", "afqmc") == records(tmp_path / "b", "afqmc")
    assert metrics(tmp_path / "b", "afqmc")["model_info"]["server"]["traffic"]["sent"] == 0


# -- a server without prompt log-probabilities -----------------------------------------------


def test_auto_falls_back_to_generation_and_likelihood_refuses_before_scoring(granite, tmp_path):
    with OpenAIServer(ModelEngine(granite, logprobs=False), model="tiny") as server:
        auto = run("afqmc", *served(server, "--set", "max_new_tokens=4", "-o", str(tmp_path / "auto"),
                                    "--cache", str(tmp_path / "c1")))
        assert auto.exit_code == 0, auto.output
        info = metrics(tmp_path / "auto", "afqmc")["model_info"]
        assert info["decoding"]["mode"] == "generate"
        assert "ignore echo/logprobs" in info["mode_note"]
        assert "mode generate (auto:" in auto.output
        sent = len(server.requests)
        refused = run("afqmc", *served(server, "--set", "mode=loglikelihood", "-o", str(tmp_path / "ll"),
                                       "--cache", str(tmp_path / "c2")))
        assert refused.exit_code == 2
        lines = refused.output.strip().splitlines()
        assert lines[-1].startswith("error: ") and "cannot score by likelihood" in lines[-1]
        assert "Traceback" not in refused.output
        probes = server.requests[sent:]
        assert [r.body["prompt"] for r in probes] == [list(PROBE_PROMPTS)]  # the probe, and no scoring request
        assert not (tmp_path / "ll").exists()


# -- scripted servers: faults, reasoning, keys -----------------------------------------------


def always(text: str) -> ScriptedEngine:
    return ScriptedEngine(lambda endpoint, body: text)


def test_faults_are_retried_with_retry_after_honoured(tmp_path):
    # timeout=5 against slow:30: an ordinary answer on a loaded machine never times out, the slow one always does
    faults = ["429:1", "500", "drop", "slow:30"]
    with OpenAIServer(always("蕴含"), model="tiny", faults=faults) as server:
        started = time.monotonic()
        result = run("afqmc", *served(server, "--set", "mode=generate", "--set", "concurrency=1",
                                      "--set", "timeout=5", "-o", str(tmp_path / "o"), "--cache", str(tmp_path / "c")),
                     "--limit", "3")
        assert result.exit_code == 0, result.output
        assert time.monotonic() - started >= 1.0  # the 429's Retry-After: 1 was waited out
        traffic = metrics(tmp_path / "o", "afqmc")["model_info"]["server"]["traffic"]
        assert traffic["retries"] == {"429": 1, "500": 1, "connection": 1, "timeout": 1}
        assert server.repeated() == 0
        assert [r.fault for r in server.requests[:4]] == ["429:1", "500", "drop", "slow:30"]


def test_retries_run_out_with_one_line_and_nothing_written(tmp_path):
    with OpenAIServer(always("蕴含"), model="tiny", faults=lambda index, path, body: "503") as server:
        result = run("afqmc", *served(server, "--set", "mode=generate", "--set", "retries=1",
                                      "-o", str(tmp_path / "o"), "--cache", str(tmp_path / "c")))
    assert result.exit_code == 2
    last = result.output.strip().splitlines()[-1]
    assert "gave up after 2 attempts" in last and "Traceback" not in result.output
    assert not (tmp_path / "o").exists()


def test_a_wrong_key_is_one_line_that_never_shows_the_key(tmp_path):
    with OpenAIServer(always("蕴含"), model="tiny", api_key="sk-right-0000") as server:
        env = {"MY_KEY": "sk-wrong-SECRET-4242"}
        refused = run("afqmc", *served(server, "--set", "mode=generate", "--set", "api_key_env=MY_KEY",
                                       "-o", str(tmp_path / "o")), env=env)
        assert refused.exit_code == 2
        assert "refused the request (401) with $MY_KEY" in refused.output
        assert "sk-wrong-SECRET-4242" not in refused.output
        # the right key: it reaches the server, and no file of the run holds it
        accepted = run("afqmc", *served(server, "--set", "mode=generate", "--set", "api_key_env=MY_KEY",
                                        "-o", str(tmp_path / "o"), "--cache", str(tmp_path / "c")),
                       env={"MY_KEY": "sk-right-0000"})
        assert accepted.exit_code == 0, accepted.output
        assert server.requests[-1].headers["authorization"] == "Bearer sk-right-0000"
    for path in (tmp_path / "o").rglob("*"):
        if path.is_file():
            assert "sk-right-0000" not in path.read_text(encoding="utf-8", errors="replace"), path
    assert "sk-right-0000" not in accepted.output


def test_an_unknown_model_names_what_the_server_offers(tmp_path):
    with OpenAIServer(always("蕴含"), model="tiny") as server:
        result = run("afqmc", "--model", "openai:gpt-nope", "--set", f"base_url={server.url}", "--sample",
                     "--set", "mode=generate", "-o", str(tmp_path / "o"))
    assert result.exit_code == 2
    assert "does not serve model 'gpt-nope' (it offers: tiny)" in result.output


def test_no_server_named_is_one_line(tmp_path):
    result = run("afqmc", "--model", "openai:tiny", "--sample", "-o", str(tmp_path / "o"),
                 env={"OPENAI_BASE_URL": ""})
    assert result.exit_code == 2
    assert "needs a server: --set base_url=" in result.output


def test_reasoning_is_kept_apart_from_the_answer(tmp_path):
    def answer(endpoint: str, body: dict) -> dict:
        return {"content": "A", "reasoning_content": "先读题，再比较选项。"}

    with OpenAIServer(ScriptedEngine(answer), model="tiny") as server:
        result = run("c3", *served(server, "--set", "mode=generate", "--set", "chat=true", "-o", str(tmp_path / "o"),
                                   "--cache", str(tmp_path / "c")))
        assert result.exit_code == 0, result.output
        bodies = [r.body for r in server.requests]
    assert all("messages" in body for body in bodies)  # chat: the server applies the template
    for record in records(tmp_path / "o", "c3"):
        assert record["raw"]["generation"] == "A"
        assert record["raw"]["reasoning"] == "先读题，再比较选项。"
        assert record["prediction"] == 0
    usage = metrics(tmp_path / "o", "c3")["model_info"]["usage"]
    assert usage["requests"] == len(bodies)


def test_requests_in_flight_reach_the_concurrency(tmp_path):
    """The first answers are held until four requests are in flight at once: a client that kept
    fewer in flight would time the wait out (an error answer, a failed run), however loaded the
    machine; one that kept more would show max_in_flight above 4."""
    servers: list[OpenAIServer] = []

    def answer(endpoint: str, body: dict) -> str:
        servers[0].wait_for(lambda stats: stats["max_in_flight"] >= 4, timeout=60)
        return "蕴含"

    with OpenAIServer(ScriptedEngine(answer), model="tiny") as server:
        servers.append(server)
        result = run("afqmc", *served(server, "--set", "mode=generate", "--set", "concurrency=4",
                                      "-o", str(tmp_path / "o"), "--cache", str(tmp_path / "c")))
        assert result.exit_code == 0, result.output
        assert server.max_in_flight == 4
    assert metrics(tmp_path / "o", "afqmc")["model_info"]["server"]["traffic"]["max_in_flight"] == 4


# -- transformers serve ----------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.slow
def test_greedy_text_through_transformers_serve_equals_llm(granite, tmp_path):
    """A real OpenAI-compatible server (transformers serve, in its own process) on the same folder."""
    executable = Path(sys.executable).with_name("transformers")
    if not executable.exists():
        pytest.skip("transformers serve is not installed (pip install 'transformers[serving]')")
    port = free_port()
    server = subprocess.Popen([str(executable), "serve", str(granite), "--port", str(port), "--host", "127.0.0.1",
                               "--device", "cpu"], stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
                              env={**os.environ, "TRANSFORMERS_VERBOSITY": "error"})
    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2):
                    break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail("transformers serve did not start")
                time.sleep(1)
        settings = ["--set", "mode=generate", "--set", "max_new_tokens=8"]
        remote = run(*TASKS, "--model", f"openai:{granite}", "--set", f"base_url=http://127.0.0.1:{port}/v1",
                     "--sample", *settings, "-o", str(tmp_path / "remote"), "--cache", str(tmp_path / "c"))
        assert remote.exit_code == 0, remote.output
    finally:
        server.terminate()
        server.wait(30)
    local = run(*TASKS, "--model", f"llm:{granite}", "--sample", *settings, "-o", str(tmp_path / "local"),
                "--cache", str(tmp_path / "c"))
    assert local.exit_code == 0, local.output
    for task in TASKS:
        pairs = list(zip(records(tmp_path / "remote", task), records(tmp_path / "local", task), strict=True))
        assert pairs
        for ours, theirs in pairs:
            assert cut_at_stop(ours["raw"]["generation"], ["\n"]) == cut_at_stop(theirs["raw"]["generation"], ["\n"])
            assert ours["prediction"] == theirs["prediction"]


def test_an_answer_that_is_not_an_openai_response_is_one_line(tmp_path):
    """A proxy's login page, or base_url pointing at a web site: a 200 that is not JSON."""
    import http.server
    import threading

    class Page(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length", 0)))
            body = "<html>请先登录</html>".encode()
            self.send_response(200)
            self.send_header("content-type", "text/html; charset=utf-8")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        result = run("afqmc", "--model", "openai:tiny", "--set", f"base_url=http://127.0.0.1:{server.server_port}/v1",
                     "--set", "mode=generate", "--sample", "-o", str(tmp_path / "o"))
    finally:
        server.shutdown()
        server.server_close()
    assert result.exit_code == 2
    assert "the answer is not an OpenAI response (it begins '<html>请先登录</html>')" in result.output
    assert "Traceback" not in result.output and not (tmp_path / "o").exists()


def test_credentials_in_base_url_are_refused_before_anything_runs(tmp_path):
    result = run("afqmc", "--model", "openai:tiny", "--set", "base_url=http://me:sk-in-url-777@127.0.0.1:9/v1",
                 "--sample", "-o", str(tmp_path / "o"))
    assert result.exit_code == 2
    assert "holds credentials" in result.output and "sk-in-url-777" not in result.output
    assert "running with model" not in result.output


def test_identical_requests_in_one_batch_are_sent_once(kernel, tmp_path):
    from clue_core.plugin import ClassificationExample, RunContext
    from clue_models_llm.factory import create

    task = kernel.task("afqmc")
    twins = [ClassificationExample(i, "花呗怎么还款", "花呗如何还钱", "1") for i in range(3)]
    with OpenAIServer(always("是"), model="tiny") as server:
        learner = create.openai("tiny", task, {"base_url": server.url, "mode": "generate"})
        learner.fit([], [], RunContext(task=task, cache_dir=tmp_path, echo=lambda text: None))
        predictions = learner.predict(twins)
        assert len(server.requests) == 1
    assert [p.id for p in predictions] == [0, 1, 2]
    assert len({json.dumps(p.raw, sort_keys=True) for p in predictions}) == 1
