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
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import http.server
import json
import random
import signal
import socket
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
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


# ---------------------------------------------------------------------------------------------- engines


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


class ScriptedEngine:
    """Answers from ``answer(endpoint, body)``: no model, for tests of clients, faults and counters.

    ``endpoint`` is the request path (``/v1/completions`` or ``/v1/chat/completions``); for a
    completions request with a list of prompts, ``answer`` is called once per prompt with
    ``body["prompt"]`` set to that prompt. A string reply is the text/content; a dict may hold
    ``content``, ``reasoning_content``, ``tool_calls`` (``[{"name", "arguments": dict or JSON
    string}]``), ``finish_reason``, ``prompt_tokens``, ``completion_tokens``, ``reasoning_tokens``.
    Token counts default to character counts. ``echo`` is honoured; ``logprobs`` are ``null``.
    """

    def __init__(self, answer: AnswerFunction) -> None:
        self.answer = answer

    def _reply(self, endpoint: str, body: dict) -> dict[str, Any]:
        reply = self.answer(endpoint, body)
        if isinstance(reply, str):
            return {"content": reply}
        if isinstance(reply, dict):
            return reply
        raise TypeError(f"the scripted answer must be a str or a dict, got {type(reply).__name__}")

    def complete(self, body: dict, prompt: str, sampling: Sampling) -> CompletionResult:
        reply = self._reply(COMPLETIONS, {**body, "prompt": prompt})
        text = str(reply.get("content") or "")
        return CompletionResult(
            text=prompt + text if sampling.echo else text,
            finish_reason=reply.get("finish_reason", "stop"),
            prompt_tokens=int(reply.get("prompt_tokens", len(prompt))),
            completion_tokens=int(reply.get("completion_tokens", len(text))),
        )

    def chat(self, body: dict, sampling: Sampling) -> ChatResult:
        messages = check_messages(body)
        reply = self._reply(CHAT, body)
        content = reply.get("content")
        reasoning = reply.get("reasoning_content")
        calls = [self._tool_call(call) for call in reply.get("tool_calls") or []]
        reasoning_tokens = reply.get("reasoning_tokens", len(reasoning) if reasoning else None)
        completion_tokens = reply.get("completion_tokens", len(content or "") + (reasoning_tokens or 0))
        return ChatResult(
            content=content,
            finish_reason=reply.get("finish_reason", "tool_calls" if calls else "stop"),
            prompt_tokens=int(reply.get("prompt_tokens", sum(len(m["content"]) for m in messages))),
            completion_tokens=int(completion_tokens),
            reasoning_content=reasoning,
            tool_calls=calls or None,
            reasoning_tokens=reasoning_tokens,
        )

    @staticmethod
    def _tool_call(call: Mapping[str, Any]) -> dict[str, Any]:
        arguments = call.get("arguments", {})
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments, ensure_ascii=False)
        return {"id": f"call_{uuid.uuid4().hex[:24]}", "type": "function",
                "function": {"name": call["name"], "arguments": arguments}}


def echo_answer(endpoint: str, body: dict) -> str:
    """The ``--scripted-echo`` reply: the prompt, or the last message's content."""
    if endpoint == COMPLETIONS:
        return str(body.get("prompt", ""))
    return message_text(body["messages"][-1].get("content"))


@dataclass
class _Generation:
    """Generated tokens (stop string already cut from ``text``) and their logprobs."""

    ids: list[int]
    text: str
    finish_reason: str
    #: per kept token: (token text, chosen logprob, {token text: logprob} of the top ones)
    steps: list[tuple[str, float, dict[str, float]]] = field(default_factory=list)


class ModelEngine:
    """A local causal LM answering as vLLM would: prompts tokenized by the tokenizer's own rules,
    prompt logprobs from one forward pass, greedy decoding when ``temperature`` is 0 or absent.

    ``logprobs=False`` models a server that ignores ``echo`` and ``logprobs`` (``transformers
    serve`` 5.24): the text without the prompt and ``"logprobs": null``. Calls into the model are
    serialised with a lock (torch uses every core for one call anyway). The end-of-sequence token
    counts in ``completion_tokens`` but is neither in the text nor in the logprobs; tokens that lie
    wholly inside a cut stop string are left out of the logprobs (they still count as generated).
    """

    def __init__(self, folder: str | Path, *, logprobs: bool = True) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.logprobs = logprobs
        self.tokenizer = AutoTokenizer.from_pretrained(str(folder))
        self.model = AutoModelForCausalLM.from_pretrained(str(folder), dtype=torch.float32).eval()
        eos = self.model.config.eos_token_id
        eos_ids = set(eos if isinstance(eos, list) else [eos] if eos is not None else [])
        if self.tokenizer.eos_token_id is not None:
            eos_ids.add(self.tokenizer.eos_token_id)
        self.eos_ids = frozenset(eos_ids)
        self.max_positions = int(getattr(self.model.config, "max_position_embeddings", 0) or 1 << 30)
        self._lock = threading.Lock()

    # -- the two endpoints

    def complete(self, body: dict, prompt: str, sampling: Sampling) -> CompletionResult:
        ids = self.tokenizer(prompt).input_ids
        echo = sampling.echo and self.logprobs
        top = sampling.logprobs if self.logprobs else None
        if echo and sampling.max_tokens == 0 and top is None:
            return CompletionResult(prompt, "length", len(ids), 0)
        prompt_steps, generation = self._run(ids, sampling, top=top, prompt_logprobs=echo and top is not None)
        text = prompt + generation.text if echo else generation.text
        logprobs = None
        if top is not None:
            logprobs = _logprobs_object(prompt_steps if echo else [], generation.steps, len(prompt))
        return CompletionResult(text, generation.finish_reason, len(ids), len(generation.ids), logprobs)

    def chat(self, body: dict, sampling: Sampling) -> ChatResult:
        messages = check_messages(body)
        if not getattr(self.tokenizer, "chat_template", None):
            raise RequestError(400, "As of transformers v4.44, default chat template is no longer allowed, so you "
                                    "must provide a chat template if the tokenizer does not define one.")
        kwargs: dict[str, Any] = {"add_generation_prompt": True, "tokenize": False}
        if body.get("tools"):
            kwargs["tools"] = body["tools"]
        rendered = self.tokenizer.apply_chat_template(messages, **kwargs)
        ids = self.tokenizer(rendered, add_special_tokens=False).input_ids
        _, generation = self._run(ids, sampling, top=None, prompt_logprobs=False)
        return ChatResult(generation.text, generation.finish_reason, len(ids), len(generation.ids))

    # -- the model

    def _run(self, ids: list[int], sampling: Sampling, *, top: int | None,
             prompt_logprobs: bool) -> tuple[list[tuple[str, float | None, dict[str, float] | None]], _Generation]:
        """Prompt steps (token text, logprob, top dict; ``None`` for the first) and the generation."""
        import torch

        if not ids:
            raise RequestError(400, "the prompt is empty (no tokens)", param="prompt")
        if len(ids) + sampling.max_tokens > self.max_positions:
            raise RequestError(400, f"This model's maximum context length is {self.max_positions} tokens. However, "
                                    f"you requested {len(ids) + sampling.max_tokens} tokens ({len(ids)} in the "
                                    f"messages, {sampling.max_tokens} in the completion). Please reduce the length "
                                    f"of the messages or completion.", param="max_tokens")
        generator = torch.Generator().manual_seed(
            sampling.seed if sampling.seed is not None else random.SystemRandom().getrandbits(63))
        prompt_steps: list[tuple[str, float | None, dict[str, float] | None]] = []
        generated: list[int] = []
        steps: list[tuple[str, float, dict[str, float]]] = []
        finish = "length"
        text = ""
        with self._lock, torch.no_grad():
            cache = _new_cache(self.model)
            cache_name = _cache_argument(self.model)
            output = self.model(input_ids=torch.tensor([ids]), use_cache=True, **{cache_name: cache})
            logp = torch.log_softmax(output.logits[0].float(), dim=-1)
            if prompt_logprobs:
                prompt_steps.append((self._token(ids[0]), None, None))
                for i in range(1, len(ids)):
                    prompt_steps.append((self._token(ids[i]), float(logp[i - 1, ids[i]]),
                                         self._top(logp[i - 1], ids[i], top or 0)))
            step_logp = logp[-1]
            while len(generated) < sampling.max_tokens:
                if sampling.temperature == 0:
                    token = int(torch.argmax(step_logp))
                else:
                    probs = torch.softmax(step_logp / sampling.temperature, dim=-1)
                    token = int(torch.multinomial(probs, 1, generator=generator))
                generated.append(token)
                if token in self.eos_ids:
                    finish = "stop"
                    break
                if top is not None:
                    steps.append((self._token(token), float(step_logp[token]), self._top(step_logp, token, top)))
                text = self.tokenizer.decode(generated, skip_special_tokens=True)
                cut = min((i for i in (text.find(s) for s in sampling.stop) if i >= 0), default=-1)
                if cut >= 0:
                    text, finish = text[:cut], "stop"
                    steps = _steps_within(steps, cut)
                    break
                if len(generated) >= sampling.max_tokens:
                    break
                output = self.model(input_ids=torch.tensor([[token]]), use_cache=True, **{cache_name: cache})
                step_logp = torch.log_softmax(output.logits[0, -1].float(), dim=-1)
        return prompt_steps, _Generation(generated, text, finish, steps)

    def _token(self, token_id: int) -> str:
        return self.tokenizer.decode([token_id])

    def _top(self, logp: Any, chosen: int, k: int) -> dict[str, float]:
        """The ``k`` most likely tokens and the chosen one, ``{text: logprob}``."""
        import torch

        picked = torch.topk(logp, k).indices.tolist() if k else []
        if chosen not in picked:
            picked.append(chosen)
        return {self._token(i): float(logp[i]) for i in picked}


def _steps_within(steps: list[tuple[str, float, dict[str, float]]], length: int) -> list:
    """The steps whose token starts before ``length`` characters (the rest lie in a cut stop string)."""
    kept, offset = [], 0
    for step in steps:
        if offset >= length:
            break
        kept.append(step)
        offset += len(step[0])
    return kept


def _logprobs_object(prompt_steps: Sequence[tuple[str, float | None, dict | None]],
                     steps: Sequence[tuple[str, float, dict]], prompt_chars: int) -> dict[str, list]:
    """OpenAI's completion logprobs: echoed prompt tokens from offset 0, generated ones after the prompt."""
    result: dict[str, list] = {"tokens": [], "token_logprobs": [], "top_logprobs": [], "text_offset": []}
    for start, part in ((0, prompt_steps), (prompt_chars, steps)):
        offset = start
        for token, logprob, top in part:
            result["tokens"].append(token)
            result["token_logprobs"].append(logprob)
            result["top_logprobs"].append(top)
            result["text_offset"].append(offset)
            offset += len(token)
    return result


def _cache_argument(model: Any) -> str:
    """transformers 5 calls the key/value cache argument ``cache``; 4 called it ``past_key_values``."""
    import inspect

    return "cache" if "cache" in inspect.signature(type(model).forward).parameters else "past_key_values"


def _new_cache(model: Any) -> Any:
    from transformers import DynamicCache

    try:
        return DynamicCache(config=model.config)
    except TypeError:  # transformers 4
        return DynamicCache()


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


# ---------------------------------------------------------------------------------------------- the server


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


# ---------------------------------------------------------------------------------------------- tiny model


def save_tiny_granite(folder: str | Path, texts: Iterable[str], seed: int = 0) -> Path:
    """Save a tiny random GraniteForCausalLM and its character tokenizer (with a chat template) to ``folder``.

    Granite, because ``transformers serve`` keeps the saved ``tokenizer.json`` for it (for llama or
    qwen2 it re-tokenizes the character vocabulary into nonsense). The vocabulary is built from
    ``texts`` plus the chat template's markers; the same texts and seed give the same files.
    """
    import torch
    from transformers import GraniteConfig, GraniteForCausalLM

    from clue_models_llm.tiny import build_tokenizer, tiny_config

    tokenizer = build_tokenizer([*texts, CHAT_TEMPLATE_TEXT])
    tokenizer.chat_template = CHAT_TEMPLATE
    ids = tiny_config(len(tokenizer), {})
    config = GraniteConfig(
        vocab_size=len(tokenizer), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=4096, tie_word_embeddings=False,
        pad_token_id=ids.pad_token_id, bos_token_id=ids.bos_token_id, eos_token_id=ids.eos_token_id,
    )
    state = torch.random.get_rng_state()
    torch.manual_seed(seed)
    try:
        model = GraniteForCausalLM(config).eval()
    finally:
        torch.random.set_rng_state(state)
    target = Path(folder)
    target.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(target)
    tokenizer.save_pretrained(target)
    return target


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
