"""Requests to an OpenAI-compatible server: concurrency, a rate limit, retries, one-line errors.

The ``openai`` SDK builds the requests and parses the answers into its own typed
responses (so anything a real server sends is read the way OpenAI documents it); its own
retries are off, because this module decides what is retried and counts it:

* 429, 5xx, a dropped connection, a timeout and a 200 whose JSON is cut short (counted as
  ``invalid JSON``) are retried up to ``retries`` times, after
  the server's ``Retry-After`` (seconds or an HTTP date, or ``retry-after-ms``) or a
  doubling backoff from 1 s with jitter; but a 500 (or 501, 505…) whose body is word for
  word the previous attempt's ends the run after that second attempt, with one line
  quoting it (:mod:`clue_models_llm.retrying`): a server that answers every attempt the
  same way will not answer the seventh otherwise;
* 401/403 (the key), 404 (the model or the endpoint) and 400 (a request the server will
  never take) end the run with one line, no traceback;
* at most ``concurrency`` requests are in flight, and with ``rpm`` > 0 request starts are
  spaced 60/rpm seconds apart.

The API key is read from the environment variable the settings name and is never part of a
message: every error text passes through :meth:`ServerClient.clean` first.
"""

from __future__ import annotations

import json
import os
import queue
import random
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from clue_core.plugin import ClueError
from clue_models_llm.retrying import Pacer, cause_of, describe, repeated, retry_after

__all__ = ["RepeatedError", "RequestRefused", "ServerClient", "Traffic", "Usage", "retry_after", "server_url",
           "usage_of"]

#: Longest wait between two attempts, whatever a server's Retry-After says.
MAX_WAIT = 300.0
#: First backoff step (seconds); doubles per attempt.
BACKOFF = 1.0


class RequestRefused(ClueError):
    """The server refused a request for good (4xx other than 429): one line, and its status.

    ``unserved``: the server lists its models and the one asked for is not among them, so the
    refusal says nothing about the request itself (``mode=auto``'s probe must not remember it).
    """

    def __init__(self, message: str, status: int | None, unserved: bool = False) -> None:
        super().__init__(message)
        self.status = status
        self.unserved = unserved


class RepeatedError(RequestRefused):
    """A server error (500, 501…) that answered two attempts in a row with the same body: not retried further."""


@dataclass
class Usage:
    """Token counts of answers (prompt, completion, reasoning) and how many requests they took."""

    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    reasoning_tokens: int = 0

    def add(self, usage: Mapping[str, Any] | None) -> None:
        self.requests += 1
        if usage:
            self.prompt_tokens += int(usage.get("prompt_tokens") or 0)
            self.completion_tokens += int(usage.get("completion_tokens") or 0)
            self.reasoning_tokens += int(usage.get("reasoning_tokens") or 0)

    def as_dict(self, price_prompt: float = 0.0, price_completion: float = 0.0, currency: str = "USD"
                ) -> dict[str, Any]:
        data: dict[str, Any] = {"requests": self.requests, "prompt_tokens": self.prompt_tokens,
                                "completion_tokens": self.completion_tokens,
                                "reasoning_tokens": self.reasoning_tokens}
        if price_prompt or price_completion:
            cost = (self.prompt_tokens * price_prompt + self.completion_tokens * price_completion) / 1e6
            data["cost"] = round(cost, 6)
            data["currency"] = currency
        return data


@dataclass
class Traffic:
    """What this process sent: requests, retries by cause, the most in flight at once."""

    sent: int = 0
    answered: int = 0
    retries: dict[str, int] = field(default_factory=dict)
    max_in_flight: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {"sent": self.sent, "answered": self.answered, "retries": dict(self.retries),
                "max_in_flight": self.max_in_flight}


def usage_of(response: Any) -> dict[str, int]:
    """``{prompt_tokens, completion_tokens, reasoning_tokens}`` of a typed response (zeros where absent)."""
    usage = getattr(response, "usage", None)
    if usage is None:
        return {"prompt_tokens": 0, "completion_tokens": 0, "reasoning_tokens": 0}
    details = getattr(usage, "completion_tokens_details", None)
    reasoning = getattr(details, "reasoning_tokens", None) if details is not None else None
    return {"prompt_tokens": int(usage.prompt_tokens or 0), "completion_tokens": int(usage.completion_tokens or 0),
            "reasoning_tokens": int(reasoning or 0)}


def server_url(base_url: str) -> str:
    """The API root to talk to: the setting, else ``$OPENAI_BASE_URL``; checked before any request."""
    url = (base_url or os.environ.get("OPENAI_BASE_URL") or "").rstrip("/")
    if not url:
        raise ClueError("model openai:<name> needs a server: --set base_url=http://HOST:PORT/v1 "
                        "(or set OPENAI_BASE_URL)")
    if not url.startswith(("http://", "https://")):
        raise ClueError(f"setting 'base_url' must start with http:// or https:// (got {url!r})")
    if "@" in url.split("://", 1)[1].split("/", 1)[0]:
        # user:key@host would be recorded with the run: keys travel only through the environment
        raise ClueError("setting 'base_url' holds credentials (user:key@host); put the key in an environment "
                        "variable and name it with --set api_key_env=NAME")
    return url


class ServerClient:
    """One server and model: ``call(kind, body)`` with retries, ``map(kind, bodies)`` concurrently."""

    def __init__(self, *, base_url: str, model: str, api_key_env: str, concurrency: int, rpm: int,
                 timeout: float, retries: int, echo: Callable[[str], None] = print) -> None:
        self.base_url = server_url(base_url)
        self.model = model
        self.key_env = api_key_env
        self._key = os.environ.get(api_key_env, "") if api_key_env else ""
        self.concurrency = concurrency
        self.retries = retries
        self.timeout = timeout
        self.echo = echo
        self.traffic = Traffic()
        self._pacer = Pacer(rpm)
        self._lock = threading.Lock()
        self._in_flight = 0
        self._client: Any = None
        #: Set when the run stops (an error elsewhere, Ctrl-C): no new attempt, no more waiting.
        self._stopping = threading.Event()

    # -- plumbing ----------------------------------------------------------------------

    @property
    def sdk(self) -> Any:
        """The ``openai.OpenAI`` client, built on first use (importing the SDK costs ~0.5 s)."""
        if self._client is None:
            import openai

            self._client = openai.OpenAI(base_url=self.base_url, api_key=self._key or "EMPTY",
                                         max_retries=0, timeout=self.timeout, http_client=self._http_client())
        return self._client

    def _http_client(self) -> Any:
        """The SDK's default HTTP client with a connection per request in flight, and TCP_NODELAY.

        Without TCP_NODELAY a request's body waits behind its headers for the server's delayed
        ACK (~40 ms a request, one at a time); without the pool limits, connections past the
        default 20 kept alive would be opened anew for every request. (The SDK's 1.x line
        uses httpx, later lines httpx2: the same API.)
        """
        import importlib
        import socket

        import openai

        factory = getattr(openai, "DefaultHttpx2Client", None)
        http = importlib.import_module("httpx2" if factory is not None else "httpx")
        factory = factory or openai.DefaultHttpxClient
        pool = self.concurrency + 2
        transport = http.HTTPTransport(limits=http.Limits(max_connections=pool, max_keepalive_connections=pool),
                                       socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)])
        return factory(transport=transport, timeout=self.timeout)

    def clean(self, text: str) -> str:
        """``text`` with the key removed, on one line."""
        if self._key:
            text = text.replace(self._key, "***")
        return " ".join(str(text).split())

    def where(self) -> str:
        """The server and model, as every message names them."""
        return f"{self.base_url} (model {self.model!r})"

    # -- one request ---------------------------------------------------------------------

    def call(self, kind: str, body: Mapping[str, Any]) -> Any:
        """POST ``body`` to ``completions`` or ``chat``; the typed response, after retries."""
        import openai

        endpoint = self.sdk.completions if kind == "completions" else self.sdk.chat.completions
        attempt = 0
        last: tuple[int, str] | None = None  # the previous attempt's server error, to see it repeat itself
        while True:
            if self._stopping.is_set():
                raise ClueError(f"{self.where()}: stopped")
            self._pacer.wait()
            with self._lock:
                self._in_flight += 1
                self.traffic.sent += 1
                self.traffic.max_in_flight = max(self.traffic.max_in_flight, self._in_flight)
            try:
                response = endpoint.create(model=self.model, **body)
            except (openai.RateLimitError, openai.InternalServerError, openai.APIConnectionError) as exc:
                last, again = repeated(last, exc)
                if again and last is not None:
                    raise RepeatedError(f"{self.where()}: the server answered {last[0]} twice with the same error, "
                                        f"so it is not retried: {self.clean(describe(exc))} (it would answer every "
                                        f"attempt the same way)", last[0]) from None
                headers = getattr(getattr(exc, "response", None), "headers", None)
                self._wait_to_retry(attempt, cause_of(exc), describe(exc), retry_after(headers))
                attempt += 1
                continue
            except ValueError as exc:  # a 200 "application/json" whose body is cut short: JSONDecodeError
                if not isinstance(exc, (json.JSONDecodeError, UnicodeDecodeError)):
                    raise
                self._wait_to_retry(attempt, "invalid JSON", f"the answer is not valid JSON ({exc})", None)
                attempt += 1
                continue
            except openai.APIResponseValidationError as exc:
                raise ClueError(f"{self.where()}: the answer is not an OpenAI response: "
                                f"{self.clean(describe(exc))}") from None
            except openai.APIStatusError as exc:
                raise self._refused(exc) from None
            finally:
                with self._lock:
                    self._in_flight -= 1
            if not hasattr(response, "choices"):  # a 200 that is not JSON (a proxy's page): the SDK returns text
                raise ClueError(f"{self.where()}: the answer is not an OpenAI response (it begins "
                                f"{self.clean(str(response))[:80]!r}); check base_url")
            with self._lock:
                self.traffic.answered += 1
            return response

    def _wait_to_retry(self, attempt: int, cause: str, description: str, asked: float | None) -> None:
        """Count a retry of ``cause`` and wait for it (``asked``: the server's Retry-After), or give up."""
        if attempt >= self.retries:
            raise ClueError(f"{self.where()}: gave up after {attempt + 1} attempts; last: "
                            f"{self.clean(description)} (settings 'retries', 'timeout')") from None
        wait_for = asked if asked is not None else BACKOFF * 2 ** attempt * (0.5 + random.random() / 2)
        with self._lock:
            self.traffic.retries[cause] = self.traffic.retries.get(cause, 0) + 1
        self._stopping.wait(min(wait_for, MAX_WAIT))

    def _refused(self, exc: Any) -> RequestRefused:
        """The one line for a refusal: the key, a model the server does not serve, a wrong path, or the request."""
        status = getattr(exc, "status_code", None)
        message = self.clean(describe(exc))
        if status in (401, 403):
            held = f"${self.key_env}" if self._key else f"no key (${self.key_env} is not set)"
            return RequestRefused(f"{self.where()} refused the request ({status}) with {held}: {message}", status)
        offered = self._offered() if status in (400, 404, 422) else None
        if offered is not None and self.model not in offered:
            listed = ", ".join(offered[:10]) or "nothing"
            return RequestRefused(f"{self.base_url} does not serve model {self.model!r} (it offers: {listed}): "
                                  f"{message}", status, unserved=True)
        if status == 404:
            return RequestRefused(f"{self.where()}: not found (404): {message}; check that base_url ends with the "
                                  f"API root (e.g. /v1)", status)
        return RequestRefused(f"{self.where()} refused the request ({status}): {message}", status)

    def _offered(self) -> list[str] | None:
        """The model names the server lists (``None`` where it lists none: say nothing of them)."""
        try:
            return [str(model.id) for model in self.sdk.models.list()]
        except Exception:  # a server without /models, or one that refuses it
            return None

    # -- many requests -------------------------------------------------------------------

    def resume(self) -> None:
        """Take requests again after :meth:`map` stopped on a failure the caller answered (a refused list)."""
        self._stopping.clear()

    def map(self, kind: str, bodies: Sequence[Mapping[str, Any]]) -> Iterator[tuple[int, Any]]:
        """``(index, response)`` as answers arrive, ``concurrency`` at a time.

        The first failure stops new requests and is raised once those in flight end, so
        every answer that did arrive has been yielded (and cached) first. When the consumer
        stops instead (Ctrl-C, an error of its own), nothing waits for the requests in
        flight: the workers are daemon threads, so a hung server cannot hold the process for
        ``timeout`` seconds; what they were still asking is lost, and asked again on resume.
        """
        if not bodies:
            return
        arrived: queue.SimpleQueue[tuple[int | None, Any, BaseException | None]] = queue.SimpleQueue()
        indices = iter(range(len(bodies)))
        taking = threading.Lock()

        def work() -> None:
            try:
                while not self._stopping.is_set():
                    with taking:
                        index = next(indices, None)
                    if index is None:
                        return
                    try:
                        arrived.put((index, self.call(kind, bodies[index]), None))
                    except BaseException as exc:  # said by the consumer, once
                        self._stopping.set()  # before this worker takes another request
                        arrived.put((index, None, exc))
            finally:
                arrived.put((None, None, None))

        workers = [threading.Thread(target=work, name=f"clue-openai-{n}", daemon=True)
                   for n in range(min(self.concurrency, len(bodies)))]
        for worker in workers:
            worker.start()
        failure: BaseException | None = None
        running, stopped = len(workers), True
        try:
            while running:
                index, response, error = arrived.get()
                if index is None:
                    running -= 1
                elif error is not None:
                    failure = failure or error
                    self._stopping.set()  # the run ends: no new request, and those still retrying give up
                else:
                    yield index, response
            stopped = False
        finally:
            if stopped:  # the consumer stopped: threads stop retrying and waiting, and nobody waits for them
                self._stopping.set()
        if failure is not None:
            raise failure
