"""A server error that answers every attempt with the same body stops after the second attempt, in one line.

llama.cpp's server answers a list of prompts with a 500 from an ``assert`` on every attempt;
retrying it six times (44 s of backoff) can never succeed. Errors that differ from one attempt
to the next, and 503s however alike (a server starting or overloaded), are retried as before.
"""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from click.testing import CliRunner

from clue_core.cli import cli
from tests.support.openai_server import OpenAIServer, ScriptedEngine

ANSWER = {"id": "c", "object": "text_completion", "created": 0, "model": "tiny",
          "choices": [{"index": 0, "text": "相同", "finish_reason": "stop", "logprobs": None}],
          "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}}


@pytest.fixture(autouse=True)
def own_home(monkeypatch, tmp_path):
    monkeypatch.setenv("CLUE_HOME", str(tmp_path / "clue-home"))


def run(*args: Any):
    return CliRunner().invoke(cli, ["run", *map(str, args)], catch_exceptions=False)


def generate(url: str, tmp_path, *more: Any) -> list[Any]:
    return ["afqmc", "--model", "openai:tiny", "--set", f"base_url={url}", "--sample", "--set", "mode=generate",
            "--set", "concurrency=1", "--limit", "2", "-o", tmp_path / "out", "--cache", tmp_path / "cache", *more]


def test_an_identical_500_stops_after_two_attempts_with_one_line(tmp_path):
    with OpenAIServer(ScriptedEngine(lambda endpoint, body: "相同"), model="tiny",
                      faults=lambda index, path, body: "500") as server:
        result = run(*generate(server.url, tmp_path))
        posts = [r for r in server.requests if r.body is not None]
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert "answered 500 twice with the same error, so it is not retried: injected fault 500" in lines[-1]
    assert "Traceback" not in result.output and "gave up" not in result.output
    assert len(posts) == 2  # not the seven that retries=6 would send
    assert not (tmp_path / "out").exists()


def test_a_503_is_retried_however_alike_its_answers(tmp_path):
    with OpenAIServer(ScriptedEngine(lambda endpoint, body: "相同"), model="tiny",
                      faults=lambda index, path, body: "503") as server:
        result = run(*generate(server.url, tmp_path, "--set", "retries=2"))
        posts = [r for r in server.requests if r.body is not None]
    assert result.exit_code == 2
    assert "gave up after 3 attempts" in result.output.strip().splitlines()[-1]
    assert len(posts) == 3


class Changing(http.server.BaseHTTPRequestHandler):
    """A 500 whose message changes on every attempt (a request id, a time), twice, then answers."""

    failures = 2
    posts = 0

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", 0)))
        cls = type(self)
        cls.posts += 1
        failing = cls.posts <= cls.failures
        body = json.dumps({"error": {"message": f"request {cls.posts} failed", "type": "internal_server_error"}}
                          if failing else ANSWER).encode()
        self.send_response(500 if failing else 200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def changing() -> Iterator[tuple[str, type[Changing]]]:
    handler = type("Handler", (Changing,), {"posts": 0})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}/v1", handler
    server.shutdown()
    server.server_close()


def test_500s_that_differ_are_retried_as_before(changing, tmp_path):
    url, handler = changing
    result = run(*generate(url, tmp_path))
    assert result.exit_code == 0, result.output
    answered = sum(len(path.read_text(encoding="utf-8").splitlines())
                   for path in (tmp_path / "out" / "afqmc" / "predictions").glob("*.jsonl"))
    assert answered >= 2 and handler.posts == 2 + answered  # two failures retried, then every example answered
    traffic = json.loads((tmp_path / "out" / "afqmc" / "metrics.json").read_text())["model_info"]["server"]["traffic"]
    assert traffic["retries"] == {"500": 2}
