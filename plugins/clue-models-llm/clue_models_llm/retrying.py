"""What a failed request says about retrying it: its cause, its message, the wait asked, a repeat.

:class:`~clue_models_llm.client.ServerClient` retries 429, 5xx, dropped connections and
timeouts. One kind of 5xx is not worth retrying: a server error that answers every attempt
with the same body (llama.cpp's server answers a list of prompts with a 500 from an
``assert``, every time). :func:`repeated` says when two attempts in a row got the same such
answer, so the client stops after the second with one line quoting the server instead of
waiting through every retry. 502, 503 and 504 (a gateway, an overloaded or starting server)
are passing states however alike their bodies, and are always retried.
"""

from __future__ import annotations

import email.utils
import json
import threading
import time
from collections.abc import Mapping
from typing import Any

#: Statuses retried however many times they repeat themselves word for word.
PASSING = frozenset({429, 502, 503, 504})


def fingerprint(exc: Any) -> tuple[int, str] | None:
    """``(status, body)`` of a server error that may repeat itself for good; ``None`` for a passing one.

    The body is the response's own text (a server that stamps its errors with a time or an
    id never repeats itself, and is retried as before).
    """
    status = getattr(exc, "status_code", None)
    if not isinstance(status, int) or status < 500 or status in PASSING:
        return None
    response = getattr(exc, "response", None)
    try:
        text = response.text if response is not None else ""
    except Exception:  # a streamed body that was never read: compare what the SDK parsed
        text = ""
    if not text:
        text = json.dumps(getattr(exc, "body", None), sort_keys=True, default=str)
    return status, text


def repeated(previous: tuple[int, str] | None, exc: Any) -> tuple[tuple[int, str] | None, bool]:
    """``(this attempt's fingerprint, whether it is the previous attempt's)``."""
    current = fingerprint(exc)
    return current, current is not None and current == previous


class Pacer:
    """Spaces request starts ``60 / rpm`` seconds apart across threads (no limit with rpm 0)."""

    def __init__(self, rpm: int) -> None:
        self.interval = 60.0 / rpm if rpm > 0 else 0.0
        self._next = 0.0
        self._lock = threading.Lock()

    def wait(self) -> None:
        if not self.interval:
            return
        with self._lock:
            now = time.monotonic()
            slot = max(now, self._next)
            self._next = slot + self.interval
        if slot > now:
            time.sleep(slot - now)


def retry_after(headers: Any) -> float | None:
    """Seconds a server asked us to wait: ``retry-after-ms``, ``Retry-After`` in seconds or as a date."""
    if headers is None:
        return None
    milliseconds = headers.get("retry-after-ms")
    if milliseconds:
        try:
            return max(0.0, float(milliseconds) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        try:
            parsed = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        return max(0.0, parsed.timestamp() - time.time())


def cause_of(exc: Any) -> str:
    status = getattr(exc, "status_code", None)
    if status is not None:
        return str(status)
    return "timeout" if type(exc).__name__ == "APITimeoutError" else "connection"


def describe(exc: Any) -> str:
    """The server's own message where it gave one, else the exception's."""
    body = getattr(exc, "body", None)
    if isinstance(body, Mapping):
        inner = body.get("error", body)
        message = inner.get("message") if isinstance(inner, Mapping) else inner
        message = message or body.get("detail")  # FastAPI servers (transformers serve) say "detail"
        if message:
            return str(message)
        kind = inner.get("type") if isinstance(inner, Mapping) else None
        if kind:  # llama.cpp's server answers a failed assert with an empty message and its type
            return f"{kind} (the server gave no message)"
    status = getattr(exc, "status_code", None)
    text = getattr(exc, "message", None) or str(exc) or type(exc).__name__
    if status is None and type(exc).__name__ == "APITimeoutError":
        return "no answer within the timeout"
    if status is None:
        return f"connection failed ({text})"
    return str(text)
