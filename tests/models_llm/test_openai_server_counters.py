"""The test server's counters are exact the moment a client holds its answer.

Concurrency is staged with events (the engine holds each answer until the test releases it)
and observed with :meth:`OpenAIServer.wait_for`, woken by every counter change: no sleeps
and no timing thresholds, so the tests hold on a loaded machine. The one timing assert, for
``latency``, is a lower bound: load can lengthen a wait, never shorten it.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import openai
import pytest

from tests.support.openai_server import COMPLETIONS, OpenAIServer, RequestRecord, ScriptedEngine, _Handler, canonical


def post(url: str, path: str, body: Any) -> int:
    """The status of a raw POST (no SDK in between)."""
    request = urllib.request.Request(url + path, data=json.dumps(body, ensure_ascii=False).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        response.read()
        return response.status


def client(server: OpenAIServer) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.url, api_key="x", max_retries=0)


def held_engine(release: threading.Event) -> ScriptedEngine:
    """Echoes the prompt once ``release`` is set (30 s guard against a hang)."""
    return ScriptedEngine(lambda endpoint, body: body["prompt"] if release.wait(30) else "never released")


def test_counters_with_concurrent_requests_and_slots() -> None:
    prompts = [f"问题{i}" for i in range(6)]
    release = threading.Event()
    with OpenAIServer(held_engine(release), slots=2) as server:
        sdk = client(server)
        with ThreadPoolExecutor(6) as pool:
            futures = [pool.submit(lambda p=p: sdk.completions.create(model="tiny", prompt=p, max_tokens=2)
                                   .choices[0].text) for p in prompts]
            try:
                held = server.wait_for(lambda s: s["in_flight"] == 6 and s["computing"] == 2)
            finally:
                release.set()
            texts = [future.result() for future in futures]
        assert texts == prompts
        assert (held["max_in_flight"], held["max_computing"], held["answered"]) == (6, 2, 0)
        assert (server.max_in_flight, server.max_computing) == (6, 2)  # four waited for a slot
        assert server.in_flight == 0 and server.repeated() == 0 and sum(server.answered.values()) == 6
        body = {"model": "tiny", "prompt": "同一个", "max_tokens": 1}
        for count in (1, 2, 3):
            assert post(server.url, "/completions", body) == 200
            assert server.answered[canonical(body)] == count  # counted before the client had it
        assert server.repeated() == 2
        assert server.requests[-1].body == body and server.requests[-1].complete
        server.reset_counts()
        assert (server.requests, server.answered, server.repeated(), server.max_in_flight) == ([], {}, 0, 0)


def test_in_flight_counts_requests_waiting_for_a_slot() -> None:
    release = threading.Event()
    with OpenAIServer(held_engine(release), slots=1) as server:
        sdk = client(server)
        with ThreadPoolExecutor(3) as pool:
            futures = [pool.submit(sdk.completions.create, model="tiny", prompt="好", max_tokens=1) for _ in range(3)]
            try:
                stats = server.wait_for(lambda s: s["in_flight"] == 3)
            finally:
                release.set()
            assert (stats["in_flight"], stats["computing"]) == (3, 1)
            assert [f.result().choices[0].text for f in futures] == ["好"] * 3
        assert (server.max_in_flight, server.max_computing, server.in_flight) == (3, 1, 0)


def test_wait_for_raises_with_the_stats_it_saw() -> None:
    with OpenAIServer(held_engine(threading.Event())) as server, \
            pytest.raises(TimeoutError, match="'in_flight': 0"):
        server.wait_for(lambda s: s["in_flight"] == 1, timeout=0.01)


def test_latency_is_added_inside_the_slot() -> None:
    release = threading.Event()
    release.set()
    with OpenAIServer(held_engine(release), slots=1, latency=0.05) as server:
        started = time.monotonic()
        assert client(server).completions.create(model="tiny", prompt="慢", max_tokens=1).choices[0].text == "慢"
        assert time.monotonic() - started >= 0.05


class _Wire:
    """A handler's output stream that notes the server's stats when the body goes out."""

    def __init__(self, server: OpenAIServer, fail: bool) -> None:
        self.server, self.fail, self.at_body = server, fail, None

    def write(self, data: bytes) -> int:
        if not data.startswith(b"HTTP/"):
            self.at_body = self.server.stats()
            if self.fail:
                raise BrokenPipeError("the client went away")
        return len(data)

    def flush(self) -> None:
        pass


@pytest.mark.parametrize("fail", [False, True], ids=["written", "write-fails"])
def test_an_answer_is_settled_before_its_body_leaves(fail: bool) -> None:
    server = OpenAIServer(ScriptedEngine(lambda endpoint, body: "好"))
    record = RequestRecord(COMPLETIONS, {"prompt": "问"}, {})
    server._arrive(record, generation=True)
    handler = object.__new__(type("_Bound", (_Handler,), {"owner": server}))
    wire = _Wire(server, fail)
    handler.wfile, handler.request_version, handler.requestline = wire, "HTTP/1.1", "POST /v1/completions HTTP/1.1"
    handler.command, handler.client_address, handler.close_connection = "POST", ("127.0.0.1", 0), False
    handler._in_flight_here = True
    assert handler._send(200, {"ok": True}, record=record, count=True) is not fail
    assert (wire.at_body["answered"], wire.at_body["in_flight"]) == (1, 0)
    assert (record.status, record.complete, dict(server.answered)) == (200, not fail, {} if fail else
                                                                       {canonical(record.body): 1})
    assert server.in_flight == 0
