"""What the OpenAI test server (:mod:`tests.support.openai_server`) and its engines share.

The endpoint paths and limits, the OpenAI-style error (:class:`RequestError`, :func:`error_body`),
a request's checked parameters (:func:`parse_sampling`, :func:`check_messages`), fault specs
(:func:`parse_fault`), the results an :class:`Engine` hands back and the :class:`RequestRecord`
of each request. Standard library only.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

#: ``(index, path, body) -> spec or None``: which fault (if any) the index-th POST request gets.
FaultFunction = Callable[[int, str, dict], "str | None"]
#: ``(endpoint path, body) -> reply`` for :class:`ScriptedEngine`.
AnswerFunction = Callable[[str, dict], "str | dict"]

COMPLETIONS = "/v1/completions"
CHAT = "/v1/chat/completions"
MODELS = "/v1/models"
#: vLLM's default ``--max-logprobs``.
MAX_LOGPROBS = 20
#: Chat requests without ``max_tokens`` (vLLM would fill the context; a random tiny model rarely stops).
CHAT_DEFAULT_MAX_TOKENS = 64
COMPLETION_DEFAULT_MAX_TOKENS = 16
FAULT_KINDS = ("429", "500", "503", "drop", "slow", "hang", "401", "404", "400")
CHAT_TEMPLATE = ("{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}\n{% endfor %}"
                 "{% if add_generation_prompt %}<|assistant|>\n{% endif %}")
#: Text whose characters the tiny vocabulary must hold so that rendered chats tokenize without ``<unk>``.
CHAT_TEMPLATE_TEXT = "<|system|>\n<|user|>\n<|assistant|>\n<|tool|>\n"
_ERROR_TYPES = {400: "BadRequestError", 401: "AuthenticationError", 404: "NotFoundError", 429: "RateLimitError",
                500: "InternalServerError", 503: "ServiceUnavailableError"}
_REASONS = {400: "Bad Request", 401: "Unauthorized", 404: "Not Found", 429: "Too Many Requests",
            500: "Internal Server Error", 503: "Service Unavailable"}


class RequestError(Exception):
    """A request the server refuses: becomes ``status`` with an OpenAI-style error body."""

    def __init__(self, status: int, message: str, *, param: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.param = param


def error_body(status: int, message: str, param: str | None = None) -> dict[str, Any]:
    """The error JSON vLLM answers with (the SDK reads ``error.message``)."""
    return {"error": {"message": message, "type": _ERROR_TYPES.get(status, "APIError"), "param": param,
                      "code": status}}


def canonical(body: Any) -> str:
    """The key a request body is counted under in :attr:`OpenAIServer.answered`."""
    return json.dumps(body, sort_keys=True, ensure_ascii=False)


# ---------------------------------------------------------------------------------------------- request parameters


@dataclass(frozen=True)
class Sampling:
    """What a request asks of the engine, checked once by the server (vLLM's validation)."""

    max_tokens: int
    temperature: float = 0.0
    stop: tuple[str, ...] = ()
    seed: int | None = None
    echo: bool = False
    logprobs: int | None = None


def _int_field(body: Mapping[str, Any], name: str, default: int | None, low: int, high: int | None = None) -> Any:
    value = body.get(name)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < low or (high is not None and value > high):
        bound = f"between {low} and {high}" if high is not None else f"at least {low}"
        raise RequestError(400, f"{name} must be an integer {bound}, got {value!r}", param=name)
    return value


def parse_sampling(body: Mapping[str, Any], *, chat: bool) -> Sampling:
    """The sampling parameters of a completions or chat body; 400 for values vLLM rejects."""
    if body.get("stream"):
        raise RequestError(400, "stream=true is not supported by this test server", param="stream")
    n = _int_field(body, "n", 1, 1)
    if n != 1:
        raise RequestError(400, "n > 1 is not supported by this test server", param="n")
    temperature = body.get("temperature")
    if temperature is None:
        temperature = 0.0
    if isinstance(temperature, bool) or not isinstance(temperature, (int, float)) or temperature < 0:
        raise RequestError(400, f"temperature must be a non-negative number, got {temperature!r}", param="temperature")
    stop = body.get("stop")
    if stop is None:
        stops: tuple[str, ...] = ()
    elif isinstance(stop, str):
        stops = (stop,)
    elif isinstance(stop, list) and all(isinstance(s, str) for s in stop):
        stops = tuple(stop)
    else:
        raise RequestError(400, f"stop must be a string or a list of strings, got {stop!r}", param="stop")
    stops = tuple(s for s in stops if s)
    seed = body.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise RequestError(400, f"seed must be an integer, got {seed!r}", param="seed")
    if chat:
        name = "max_completion_tokens" if body.get("max_completion_tokens") is not None else "max_tokens"
        max_tokens = _int_field(body, name, CHAT_DEFAULT_MAX_TOKENS, 1)
        return Sampling(max_tokens=max_tokens, temperature=float(temperature), stop=stops, seed=seed)
    echo = body.get("echo") or False
    if not isinstance(echo, bool):
        raise RequestError(400, f"echo must be a boolean, got {echo!r}", param="echo")
    max_tokens = _int_field(body, "max_tokens", COMPLETION_DEFAULT_MAX_TOKENS, 0)
    if max_tokens == 0 and not echo:
        raise RequestError(400, "max_tokens must be at least 1 unless echo is true", param="max_tokens")
    logprobs = _int_field(body, "logprobs", None, 0, MAX_LOGPROBS)
    return Sampling(max_tokens=max_tokens, temperature=float(temperature), stop=stops, seed=seed, echo=echo,
                    logprobs=logprobs)


# ---------------------------------------------------------------------------------------------- engine results


@dataclass
class CompletionResult:
    """One choice of a completion, with its token counts."""

    text: str
    finish_reason: str
    prompt_tokens: int
    completion_tokens: int
    logprobs: dict[str, list] | None = None


@dataclass
class ChatResult:
    """The assistant message of a chat completion, with its token counts."""

    content: str | None
    finish_reason: str
    prompt_tokens: int
    completion_tokens: int
    reasoning_content: str | None = None
    tool_calls: list[dict[str, Any]] | None = None
    reasoning_tokens: int | None = None


class Engine(Protocol):
    """What the server asks of whatever produces the answers."""

    def complete(self, body: dict, prompt: str, sampling: Sampling) -> CompletionResult: ...

    def chat(self, body: dict, sampling: Sampling) -> ChatResult: ...


def message_text(content: Any) -> str:
    """A chat message's content as text (a string, or the text parts of a list of parts)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    raise RequestError(400, f"message content must be a string or a list of parts, got {content!r}",
                       param="messages")


def check_messages(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The chat messages with their content as text; 400 for a malformed list."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise RequestError(400, "messages must be a non-empty list", param="messages")
    checked = []
    for message in messages:
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise RequestError(400, f"each message needs a 'role', got {message!r}", param="messages")
        checked.append({**message, "content": message_text(message.get("content"))})
    return checked


# ---------------------------------------------------------------------------------------------- faults


def parse_fault(spec: str) -> tuple[str, float]:
    """``"429:2"`` → ``("429", 2.0)``; ``"drop"`` → ``("drop", 0.0)``; ValueError for anything else."""
    kind, _, argument = spec.partition(":")
    if kind not in FAULT_KINDS:
        raise ValueError(f"unknown fault spec {spec!r} (known: {', '.join(FAULT_KINDS)})")
    if kind in ("429", "slow"):
        try:
            seconds = float(argument)
        except ValueError:
            raise ValueError(f"fault spec {spec!r} needs seconds, e.g. '{kind}:1'") from None
        return kind, seconds
    if argument:
        raise ValueError(f"fault spec {spec!r} takes no argument")
    return kind, 0.0


# ---------------------------------------------------------------------------------------------- records


@dataclass
class RequestRecord:
    """One request as the server saw it; ``status`` is ``None`` when it never answered (drop, hang).

    ``headers`` have lower-case names (clients differ in case: httpx sends ``authorization``).
    """

    path: str
    body: Any
    headers: dict[str, str]
    status: int | None = None
    complete: bool = False
    fault: str | None = None
