"""The HTTP side of the OpenAI test server (:mod:`tests.support.openai_server`): one request handler.

:class:`_Handler` reads a request, applies the fault its server assigns it, asks the server for
the answer and writes it, settling the server's counters as it goes. Standard library only.
"""

from __future__ import annotations

import contextlib
import http.server
import json
import socket
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from tests.support.openai_protocol import (
    _REASONS,
    CHAT,
    COMPLETIONS,
    MODELS,
    RequestError,
    RequestRecord,
    error_body,
    parse_fault,
)

if TYPE_CHECKING:
    from tests.support.openai_server import OpenAIServer


class _Handler(http.server.BaseHTTPRequestHandler):
    owner: OpenAIServer
    protocol_version = "HTTP/1.1"  # keep-alive, as the SDK's connection pool expects
    server_version = "clue-openai-test"
    # headers and body go out in two writes: without TCP_NODELAY, Nagle's algorithm and the
    # client's delayed ACK hold the body back ~40 ms per answer (vLLM's servers set it too)
    disable_nagle_algorithm = True
    _in_flight_here = False  # the current request counts in OpenAIServer.in_flight

    def setup(self) -> None:
        super().setup()
        with self.owner._lock:
            self.owner._connections.add(self.connection)

    def finish(self) -> None:
        with self.owner._lock:
            self.owner._connections.discard(self.connection)
        with contextlib.suppress(OSError):
            super().finish()

    def log_message(self, format: str, *args: object) -> None:  # keep test output clean
        pass

    # -- plumbing

    def _send(self, status: int, payload: Any, headers: Mapping[str, str] | None = None,
              record: RequestRecord | None = None, count: bool = False) -> bool:
        """Write a JSON response; ``False`` when the client went away before it was all written.

        With ``record``, the request is settled (status, answer count, no longer in flight) after
        the headers and before the body goes out: a client that has read the whole answer always
        finds it in the counters, however the threads are scheduled. A failed write undoes it.
        """
        data = json.dumps(payload, ensure_ascii=False).encode()
        try:
            self.send_response(status, _REASONS.get(status))
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            if record is not None:
                self._settle(record, status, count, complete=True)
            self.wfile.write(data)
            self.wfile.flush()
            return True
        except OSError:
            self.close_connection = True
            if record is not None:
                self._settle(record, status, count, complete=False)
            return False

    def _settle(self, record: RequestRecord, status: int | None, count: bool, complete: bool) -> None:
        """Record the outcome and leave the in-flight count."""
        self.owner._finish(record, status, complete, count)
        self._leave_once()

    def _leave_once(self) -> None:
        """Leave the in-flight count if this request (a generation one) is still in it."""
        if self._in_flight_here:
            self._in_flight_here = False
            self.owner._leave()

    def _drop(self) -> None:
        """Close the connection without a byte of response."""
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)

    def _read_body(self) -> tuple[Any, bool]:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if not raw:
            return None, False
        try:
            return json.loads(raw), True
        except (UnicodeDecodeError, json.JSONDecodeError):
            return raw.decode("utf-8", "replace"), False

    def _headers(self) -> dict[str, str]:
        return {name.lower(): value for name, value in self.headers.items()}

    def _authorized(self) -> bool:
        key = self.owner.api_key
        return key is None or self.headers.get("Authorization") == f"Bearer {key}"

    # -- methods

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0].rstrip("/")
        if path == "/stats":
            self._send(200, self.owner.stats())
            return
        record = RequestRecord(path, None, self._headers())
        self.owner._arrive(record, generation=False)
        if not self._authorized():
            status, payload = 401, error_body(401, "Unauthorized: a valid API key is required")
        elif path == MODELS:
            status, payload = 200, {"object": "list", "data": [
                {"id": self.owner.model, "object": "model", "created": self.owner.created, "owned_by": "clue-tests"}]}
        else:
            status, payload = 404, error_body(404, f"Not Found: {path}")
        self._send(status, payload, record=record)

    def do_POST(self) -> None:
        path = self.path.split("?", 1)[0].rstrip("/")
        body, parsed = self._read_body()
        if path == "/stats/reset":
            self.owner.reset_counts()
            self._send(200, {"reset": True})
            return
        generation = path in (COMPLETIONS, CHAT)
        record = RequestRecord(path, body, self._headers())
        index = self.owner._arrive(record, generation=generation)
        self._in_flight_here = generation
        try:
            self._post(path, body, parsed, record, index)
        finally:
            self._leave_once()

    def _post(self, path: str, body: Any, parsed: bool, record: RequestRecord, index: int | None) -> None:
        owner = self.owner
        if not self._authorized():
            self._send(401, error_body(401, "Unauthorized: a valid API key is required"), record=record)
            return
        if index is None:
            self._send(404, error_body(404, f"Not Found: {path}"), record=record)
            return
        try:
            spec = owner._fault_for(index, path, body)
            kind, seconds = parse_fault(spec) if spec is not None else (None, 0.0)
        except ValueError as error:
            self._send(500, error_body(500, str(error)), record=record)
            return
        record.fault = spec
        if kind in ("drop", "hang"):
            if kind == "hang":
                owner._stopped.wait()
            self._settle(record, None, count=False, complete=False)  # before the client can see the drop
            self._drop()
            return
        if kind == "slow" and owner._stopped.wait(seconds):
            self._settle(record, None, count=False, complete=False)  # before the client can see the drop
            self._drop()
            return
        if kind not in (None, "slow"):
            status = int(kind)
            headers = {"Retry-After": _seconds_text(seconds)} if status == 429 else None
            message = f"injected fault {spec}"
            self._send(status, error_body(status, message), headers, record=record)
            return
        if not parsed:
            self._send(400, error_body(400, "the request body is not valid JSON"), record=record)
            return
        try:
            status, payload = 200, owner._compute(path, body)
        except RequestError as error:
            status, payload = error.status, error_body(error.status, error.message, error.param)
        except Exception as error:  # an engine bug: answer 500 like a server would, and keep serving
            status, payload = 500, error_body(500, f"{type(error).__name__}: {error}")
        self._send(status, payload, record=record, count=kind is None or kind == "slow")


def _seconds_text(seconds: float) -> str:
    return str(int(seconds)) if float(seconds).is_integer() else str(seconds)
