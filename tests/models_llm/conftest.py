"""Fixtures for the clue-models-llm tests: the memorising model, a server answering one fixed body."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.models_llm.memorizer import ALL_TASKS, sample_pairs, train_memorizer


@pytest.fixture(scope="session")
def kernel():
    from clue_core.kernel import Kernel

    return Kernel()


@pytest.fixture(scope="session")
def memorizer(kernel, tmp_path_factory) -> Path:
    """A saved model that answers every sample dev example of every CLUE task (see memorizer.py)."""
    folder = tmp_path_factory.mktemp("memorizer") / "model"
    fit = train_memorizer(sample_pairs(kernel, ALL_TASKS), folder)
    assert fit["accuracy"] == 1.0, fit
    return folder


class FixedAnswer(http.server.BaseHTTPRequestHandler):
    """Every POST: 200 ``application/json`` with ``body`` (bytes, taken as they are)."""

    body = b""
    posts = 0

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", 0)))
        type(self).posts += 1
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def answering() -> Iterator:
    """``start(body)`` → the URL of a server on 127.0.0.1 that answers every POST with ``body``."""
    servers = []

    def start(body: bytes) -> tuple[str, type[FixedAnswer]]:
        handler = type("Handler", (FixedAnswer,), {"body": body, "posts": 0})
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_port}/v1", handler

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()
