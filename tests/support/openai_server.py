"""A small OpenAI-compatible server on 127.0.0.1 that answers as vLLM's endpoints do, for tests and benchmarks.

The ``openai:<model>`` model family talks to real servers (vLLM, SGLang, ``transformers serve``);
its tests need one that runs offline, answers from a LOCAL model folder (or a scripted function),
misbehaves on request and counts what it saw. Usage::

    with OpenAIServer(ModelEngine(folder), faults=["429:1", None, "drop"], slots=2) as server:
        client = openai.OpenAI(base_url=server.url, api_key="x")
        ...
        assert server.repeated() == 0

Endpoints: ``GET /v1/models``, ``POST /v1/completions``, ``POST /v1/chat/completions``, plus
``GET /stats`` and ``POST /stats/reset`` (for a server in another process; not recorded).
Run it as a process for benchmarks::

    python -m tests.support.openai_server --model-dir DIR --port 0 --slots 2 --latency 0.05

which prints ``READY http://127.0.0.1:PORT/v1`` once listening and serves until SIGTERM/SIGINT.

Only the standard library is used for HTTP; torch and transformers are imported by
:class:`ModelEngine` and :func:`save_tiny_granite` alone, so scripted servers start instantly.

This module is the entry point and holds the server's lifecycle and counters; the parts live in
:mod:`tests.support.openai_protocol` (paths, errors, request checks, faults, records),
:mod:`tests.support.openai_engines` (scripted and model engines, the tiny model) and
:mod:`tests.support.openai_http` (the request handler). Every name is importable from here.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import http.server
import signal
import socket
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from tests.support.openai_engines import ModelEngine, ScriptedEngine, echo_answer, save_tiny_granite
from tests.support.openai_http import _Handler
from tests.support.openai_protocol import (
    CHAT,
    CHAT_DEFAULT_MAX_TOKENS,
    CHAT_TEMPLATE,
    CHAT_TEMPLATE_TEXT,
    COMPLETION_DEFAULT_MAX_TOKENS,
    COMPLETIONS,
    FAULT_KINDS,
    MAX_LOGPROBS,
    MODELS,
    AnswerFunction,
    ChatResult,
    CompletionResult,
    Engine,
    FaultFunction,
    RequestError,
    RequestRecord,
    Sampling,
    canonical,
    check_messages,
    error_body,
    message_text,
    parse_fault,
    parse_sampling,
)

__all__ = [
    "CHAT", "CHAT_DEFAULT_MAX_TOKENS", "CHAT_TEMPLATE", "CHAT_TEMPLATE_TEXT", "COMPLETIONS",
    "COMPLETION_DEFAULT_MAX_TOKENS", "FAULT_KINDS", "MAX_LOGPROBS", "MODELS", "AnswerFunction", "ChatResult",
    "CompletionResult", "Engine", "FaultFunction", "ModelEngine", "OpenAIServer", "RequestError", "RequestRecord",
    "Sampling", "ScriptedEngine", "_Handler", "canonical", "check_messages", "echo_answer", "error_body", "main",
    "message_text", "parse_fault", "parse_sampling", "save_tiny_granite",
]

# ---------------------------------------------------------------------------------------------- the server


class OpenAIServer:
    """Serve an engine over OpenAI's HTTP API on a free loopback port, in daemon threads.

    ``model``: the one model id it serves (others get 404). ``faults``: a function ``(index, path,
    body) -> spec | None`` or a list of specs for the POST requests to the two generation endpoints
    in arrival order (index 0, 1, 2…; ``reset_counts`` does not rewind it); specs ``"429:<s>"``,
    ``"500"``, ``"503"``, ``"drop"``, ``"slow:<s>"``, ``"hang"``, ``"401"``, ``"404"``, ``"400"``.
    ``slots``: at most that many requests computed at once (others wait); ``latency``: seconds of
    compute added to each answer, inside a slot. ``api_key``: requests without ``Authorization:
    Bearer <api_key>`` get 401.

    Counters: ``requests`` (records), ``answered`` (canonical body → 200s fully written),
    ``repeated()``, ``in_flight``/``max_in_flight`` (generation requests received and not yet
    finished, waiting for a slot included), ``computing``/``max_computing`` (holding a slot).
    """

    def __init__(self, engine: Engine, *, model: str = "tiny",
                 faults: FaultFunction | Iterable[str | None] | None = None,
                 slots: int | None = None, latency: float = 0.0, api_key: str | None = None, port: int = 0) -> None:
        self.engine = engine
        self.model = model
        if faults is None or callable(faults):
            self._fault_function = faults
        else:
            specs = list(faults)
            for spec in specs:
                if spec is not None:
                    parse_fault(spec)
            self._fault_function = lambda index, path, body: specs[index] if index < len(specs) else None
        if slots is not None and slots < 1:
            raise ValueError(f"slots must be at least 1, got {slots}")
        self._slots = threading.Semaphore(slots) if slots else None
        self.latency = latency
        self.api_key = api_key
        self.created = int(time.time())
        self._port = port
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)  # notified whenever a counter changes
        self._stopped = threading.Event()
        self._requests: list[RequestRecord] = []
        self._answered: collections.Counter[str] = collections.Counter()
        self._posts = 0
        self._in_flight = self._max_in_flight = 0
        self._computing = self._max_computing = 0
        self._connections: set[socket.socket] = set()
        self._httpd: http.server.ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle

    def start(self) -> OpenAIServer:
        handler = type("_BoundHandler", (_Handler,), {"owner": self})
        httpd_class = type("_Server", (http.server.ThreadingHTTPServer,), {"request_queue_size": 256})
        self._httpd = httpd_class(("127.0.0.1", self._port), handler)
        self._httpd.daemon_threads = True
        self._port = self._httpd.server_address[1]
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="openai-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, release held ("hang") requests and close open connections; idempotent."""
        self._stopped.set()
        with self._lock:
            httpd, self._httpd = self._httpd, None
            connections = list(self._connections)
        if httpd is None:
            return
        httpd.shutdown()
        httpd.server_close()
        for connection in connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> OpenAIServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        return self._port

    @property
    def url(self) -> str:
        """The base URL clients take: ``http://127.0.0.1:<port>/v1``."""
        return f"http://127.0.0.1:{self._port}/v1"

    # -- counters

    @property
    def requests(self) -> list[RequestRecord]:
        with self._lock:
            return list(self._requests)

    @property
    def answered(self) -> collections.Counter[str]:
        with self._lock:
            return collections.Counter(self._answered)

    def repeated(self) -> int:
        """How many answers were for bodies already answered (a client that re-sends work)."""
        with self._lock:
            return sum(count - 1 for count in self._answered.values() if count > 1)

    @property
    def in_flight(self) -> int:
        with self._lock:
            return self._in_flight

    @property
    def max_in_flight(self) -> int:
        with self._lock:
            return self._max_in_flight

    @property
    def computing(self) -> int:
        with self._lock:
            return self._computing

    @property
    def max_computing(self) -> int:
        with self._lock:
            return self._max_computing

    def reset_counts(self) -> None:
        """Forget records and answers; the maxima restart from what is in flight now."""
        with self._lock:
            self._requests.clear()
            self._answered.clear()
            self._max_in_flight = self._in_flight
            self._max_computing = self._computing

    def stats(self) -> dict[str, int]:
        """What ``GET /stats`` answers."""
        with self._lock:
            return self._stats()

    def wait_for(self, predicate: Callable[[dict[str, int]], bool], timeout: float = 30.0) -> dict[str, int]:
        """Block until ``predicate(stats)`` holds, woken by each counter change, and return those stats.

        Tests synchronise on the server's state with it instead of sleeping; ``timeout`` only
        guards against a hang and raises ``TimeoutError`` with the stats last seen.
        """
        with self._changed:
            if not self._changed.wait_for(lambda: predicate(self._stats()), timeout):
                raise TimeoutError(f"server stats never matched: {self._stats()}")
            return self._stats()

    def _stats(self) -> dict[str, int]:
        """:meth:`stats` with the lock held."""
        return {"requests": len(self._requests), "answered": sum(self._answered.values()),
                    "repeated": sum(c - 1 for c in self._answered.values() if c > 1),
                    "max_in_flight": self._max_in_flight, "in_flight": self._in_flight,
                    "max_computing": self._max_computing, "computing": self._computing}

    # -- used by the handler

    def _arrive(self, record: RequestRecord, generation: bool) -> int | None:
        with self._lock:
            self._requests.append(record)
            if not generation:
                return None
            index, self._posts = self._posts, self._posts + 1
            self._in_flight += 1
            self._max_in_flight = max(self._max_in_flight, self._in_flight)
            self._changed.notify_all()
            return index

    def _leave(self) -> None:
        with self._lock:
            self._in_flight -= 1
            self._changed.notify_all()

    def _finish(self, record: RequestRecord, status: int | None, complete: bool, count: bool) -> None:
        """Set the record's outcome, counting a complete 200 once (and uncounting it if a write failed)."""
        with self._lock:
            was = record.complete and record.status == 200
            record.status, record.complete = status, complete
            now = complete and status == 200
            if count and now != was:
                key = canonical(record.body)
                self._answered[key] += 1 if now else -1
                if not self._answered[key]:
                    del self._answered[key]
            self._changed.notify_all()

    def _fault_for(self, index: int, path: str, body: Any) -> str | None:
        if self._fault_function is None:
            return None
        return self._fault_function(index, path, body)

    def _compute(self, path: str, body: Any) -> dict[str, Any]:
        """The 200 body for a generation request (holding a slot), or RequestError."""
        if self._slots is not None:
            self._slots.acquire()
        with self._lock:
            self._computing += 1
            self._max_computing = max(self._max_computing, self._computing)
            self._changed.notify_all()
        try:
            if self.latency:
                self._stopped.wait(self.latency)
            return self._answer(path, body)
        finally:
            with self._lock:
                self._computing -= 1
                self._changed.notify_all()
            if self._slots is not None:
                self._slots.release()

    def _answer(self, path: str, body: Any) -> dict[str, Any]:
        if not isinstance(body, dict):
            raise RequestError(400, "the request body must be a JSON object")
        model = body.get("model", self.model)
        if model != self.model:
            raise RequestError(404, f"The model `{model}` does not exist.", param="model")
        if path == COMPLETIONS:
            return self._completion(body)
        return self._chat(body)

    def _completion(self, body: dict) -> dict[str, Any]:
        sampling = parse_sampling(body, chat=False)
        prompt = body.get("prompt")
        prompts = [prompt] if isinstance(prompt, str) else prompt
        if not isinstance(prompts, list) or not prompts or not all(isinstance(p, str) for p in prompts):
            raise RequestError(400, "prompt must be a string or a non-empty list of strings", param="prompt")
        results = [self.engine.complete(body, p, sampling) for p in prompts]
        prompt_tokens = sum(r.prompt_tokens for r in results)
        completion_tokens = sum(r.completion_tokens for r in results)
        return {
            "id": f"cmpl-{uuid.uuid4().hex}", "object": "text_completion", "created": int(time.time()),
            "model": self.model,
            "choices": [{"index": i, "text": r.text, "logprobs": r.logprobs, "finish_reason": r.finish_reason}
                        for i, r in enumerate(results)],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens},
        }

    def _chat(self, body: dict) -> dict[str, Any]:
        sampling = parse_sampling(body, chat=True)
        result = self.engine.chat(body, sampling)
        message: dict[str, Any] = {"role": "assistant", "content": result.content}
        if result.reasoning_content is not None:
            message["reasoning_content"] = result.reasoning_content
        if result.tool_calls:
            message["tool_calls"] = result.tool_calls
        usage: dict[str, Any] = {"prompt_tokens": result.prompt_tokens, "completion_tokens": result.completion_tokens,
                                 "total_tokens": result.prompt_tokens + result.completion_tokens}
        if result.reasoning_tokens is not None:
            usage["completion_tokens_details"] = {"reasoning_tokens": result.reasoning_tokens}
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex}", "object": "chat.completion", "created": int(time.time()),
            "model": self.model,
            "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": result.finish_reason}],
            "usage": usage,
        }


# ---------------------------------------------------------------------------------------------- as a process


def main(argv: Sequence[str] | None = None) -> int:
    """Serve until SIGTERM/SIGINT; print ``READY <url>`` once listening."""
    parser = argparse.ArgumentParser(prog="python -m tests.support.openai_server", description=__doc__.split("\n")[0])
    parser.add_argument("--model-dir", help="a local model folder (save_pretrained) to answer with")
    parser.add_argument("--scripted-echo", action="store_true", help="answer with the prompt / last message, no model")
    parser.add_argument("--model", default="tiny", help="the model id served (default: tiny)")
    parser.add_argument("--port", type=int, default=0, help="0: a free port")
    parser.add_argument("--slots", type=int, default=None, help="requests computed at once (default: unlimited)")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds of compute added to each answer")
    parser.add_argument("--api-key", default=None)
    parser.add_argument("--no-logprobs", action="store_true", help="ignore echo/logprobs like transformers serve")
    parser.add_argument("--faults", default="", help="comma-separated specs for requests 0, 1, …; empty = none")
    args = parser.parse_args(argv)
    if args.scripted_echo == bool(args.model_dir):
        parser.error("give exactly one of --model-dir and --scripted-echo")
    faults = [spec or None for spec in args.faults.split(",")] if args.faults else None
    try:
        for spec in faults or []:
            if spec is not None:
                parse_fault(spec)
    except ValueError as error:
        parser.error(str(error))
    engine: Engine = (ScriptedEngine(echo_answer) if args.scripted_echo
                      else ModelEngine(args.model_dir, logprobs=not args.no_logprobs))
    done = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: done.set())
    with OpenAIServer(engine, model=args.model, faults=faults, slots=args.slots, latency=args.latency,
                      api_key=args.api_key, port=args.port) as server:
        print(f"READY {server.url}", flush=True)
        while not done.wait(0.5):
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
