"""The OpenAI-compatible backend: ``openai:<model>``, a model behind any such server (vLLM, SGLang, llama.cpp…).

Everything that decides what is asked and how answers are read is the learner's
(:class:`~clue_models_llm.learner.LLMLearner`): the task's prompt, few-shot demos, the
result cache, answer extraction. This backend only sends requests and reads answers:

* likelihood: one completions request per example, its prompt a list with ``prompt +
  choice`` for every choice, ``echo`` and ``logprobs`` on; the echoed tokens' character
  offsets say which tokens belong to the choice (a token that straddles the boundary
  belongs to the choice, as the local scorer decides), and the first token's ``null``
  log-probability (vLLM gives none for the very first prompt token) is left out;
* generation: completions (plain prompts) or chat completions (``chat=true``: the server
  applies the model's chat template), greedy unless ``temperature`` > 0. A reasoning
  model's ``reasoning_content`` is kept apart from the answer; tool calls come back as
  ``tool_calls``.

``mode=auto`` scores by likelihood where the server echoes prompt log-probabilities and
generates elsewhere; whether it does is asked once (a one-token probe), and a real answer
to it is remembered in the result cache, so a resumed or repeated run sends nothing. A
probe the server refuses (400/404/422) falls back to generation for this run only and is
asked again next time; a refusal because the server does not serve the model ends the run.
Every answer is reported as it arrives (the learner commits it to the cache at once), so a
killed run resumes with no request repeated. An answer of another shape (a field missing or
of another type) is one line naming the server, and is never cached.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from clue_core.plugin import ClueError, RunContext
from clue_models_llm.backend import Backend, Done, GenerateOptions, Memo, Prompting, ScoreRequest
from clue_models_llm.client import RequestRefused, ServerClient, server_url, usage_of
from clue_models_llm.entries import generation_ok, likelihood_ok, probe_ok
from clue_models_llm.prompts import Message

#: How a chat prompt travels from the renderer to the request: JSON behind this mark.
CHAT_MARK = "\u0000chat:"
#: The probe's prompt: short, and any tokenizer splits it into more than one token.
PROBE_PROMPT = "你好，世界"
#: What reading an answer of an unexpected shape raises (a field missing, a text that is a number, a count
#: of 1e400 that no integer holds…).
SHAPE_ERRORS = (AttributeError, TypeError, ValueError, KeyError, IndexError, ArithmeticError)


def chat_prompt(messages: Sequence[Message], tools: Sequence[Mapping[str, Any]] | None = None) -> str:
    """A chat request as the prompt text the cache keys and the predictions record."""
    payload: dict[str, Any] = {"messages": list(messages)}
    if tools:
        payload["tools"] = list(tools)
    return CHAT_MARK + json.dumps(payload, ensure_ascii=False)


def likelihood_body(question: ScoreRequest) -> dict[str, Any]:
    return {"prompt": [question.prompt + choice for choice in question.choices], "max_tokens": 1,
            "temperature": 0, "echo": True, "logprobs": 1}


def _spans(offsets: Sequence[int], length: int) -> list[tuple[int, int]]:
    """``(start, end)`` of every token from its offset and the next token's."""
    return [(start, offsets[i + 1] if i + 1 < len(offsets) else length) for i, start in enumerate(offsets)]


def parse_likelihood(response: Any, question: ScoreRequest) -> dict[str, Any]:
    """The local scorer's entry (``logprobs``, ``tokens``, ``prefix_*``) from an echoed completion."""
    choices = sorted(response.choices, key=lambda c: c.index)
    if len(choices) != len(question.choices):
        raise ClueError(f"the server answered {len(choices)} of {len(question.choices)} prompts of one request")
    rows = []
    for choice, continuation in zip(choices, question.choices):
        whole = question.prompt + continuation
        logprobs = choice.logprobs
        offsets = getattr(logprobs, "text_offset", None) if logprobs is not None else None
        values = getattr(logprobs, "token_logprobs", None) if logprobs is not None else None
        if not offsets or values is None or len(offsets) != len(values):
            raise ClueError("the server's completions did not echo the prompt's token log-probabilities "
                            "(echo + logprobs); score with --set mode=generate")
        spans = _spans(list(offsets), len(choice.text or ""))
        inside = [i for i, (start, _) in enumerate(spans) if start < len(whole)]  # the generated token is not
        prompt_part = sum(1 for i in inside if spans[i][1] <= len(question.prompt))
        rows.append((list(values[:len(inside)]), prompt_part))
    shared = min(min(part for _, part in rows), min(len(values) for values, _ in rows) - 1)
    shared = max(shared, 0)
    first, _ = rows[0]
    prefix = [v for v in first[:shared] if v is not None]
    logprobs, tokens = [], []
    for values, _ in rows:
        continuation = values[shared:]
        logprobs.append(float(sum(v for v in continuation if v is not None)))
        tokens.append(sum(1 for v in continuation if v is not None))
    return {"logprobs": logprobs, "tokens": tokens, "prefix_logprob": float(sum(prefix)),
            "prefix_tokens": len(prefix), "usage": usage_of(response)}


def probe_answer(response: Any) -> dict[str, Any]:
    """What the probe's answer says: whether the prompt came back with its token log-probabilities."""
    choice = response.choices[0] if response.choices else None
    logprobs = choice.logprobs if choice is not None else None
    values = getattr(logprobs, "token_logprobs", None) if logprobs is not None else None
    offsets = getattr(logprobs, "text_offset", None) if logprobs is not None else None
    echoed = bool(choice is not None and (choice.text or "").startswith(PROBE_PROMPT))
    if echoed and values and offsets and len(values) == len(offsets):
        return {"capable": True, "why": "the server echoes prompt log-probabilities"}
    return {"capable": False, "why": "its completions ignore echo/logprobs (no prompt log-probabilities came back)"}


def read_answer(where: str, parse: Callable[..., dict[str, Any]], valid: Callable[[Any], bool], response: Any,
                *args: Any) -> dict[str, Any]:
    """``parse(response, *args)``, checked by ``valid``: an answer of another shape is one line naming ``where``."""
    try:
        entry = parse(response, *args)
    except ClueError as exc:
        raise ClueError(f"{where}: {exc}") from None
    except SHAPE_ERRORS as exc:
        raise ClueError(f"{where}: the answer is not an OpenAI response of the expected shape "
                        f"({type(exc).__name__}: {exc})") from None
    if not valid(entry):
        raise ClueError(f"{where}: the answer is not an OpenAI response of the expected shape (a field is missing, "
                        f"of another type, or a value no model gives: a log-probability not finite or above 0)")
    return entry


def parse_generation(response: Any, chat: bool) -> dict[str, Any]:
    """The local generator's entry (``text``, ``tokens``, ``finish``) plus reasoning, tool calls, usage."""
    if not response.choices:
        raise ClueError("the server answered with no choices")
    choice = response.choices[0]
    usage = usage_of(response)
    entry: dict[str, Any] = {"finish": choice.finish_reason or "", "tokens": usage["completion_tokens"],
                             "thinking_tokens": usage["reasoning_tokens"], "usage": usage}
    if not chat:
        entry["text"] = choice.text or ""
        return entry
    message = choice.message
    if message is None:
        entry["text"] = ""
        return entry
    extra = getattr(message, "model_extra", None) or {}
    reasoning = extra.get("reasoning_content") or extra.get("reasoning")
    entry["text"] = message.content or ""
    if reasoning:
        entry["reasoning"] = str(reasoning)
    calls = []
    for call in message.tool_calls or []:
        function = getattr(call, "function", None)
        if function is None:
            continue
        try:
            arguments: Any = json.loads(function.arguments) if function.arguments else {}
        except json.JSONDecodeError:
            arguments = function.arguments
        calls.append({"name": function.name, "arguments": arguments})
    if calls:
        entry["tool_calls"] = calls
    return entry


class OpenAIBackend(Backend):
    """``model`` as a server at ``base_url`` (or $OPENAI_BASE_URL) serves it."""

    def __init__(self, model: str | None, values: Mapping[str, Any], name: str) -> None:
        if not model:
            raise ClueError("model 'openai' needs the served model's name: openai:<name> (what the server's "
                            "/v1/models lists)")
        self.values = dict(values)
        server_url(self.values["base_url"])  # a missing or unusable URL stops the run before any task starts
        self.served = model
        self.name = name
        self.client: ServerClient | None = None
        self.chat = bool(self.values.get("chat"))

    # -- setting up -----------------------------------------------------------------------

    def load(self, context: RunContext, texts: Callable[[], Sequence[str]]) -> None:
        """No weights: the client (nothing is sent until the first request)."""
        if context.world_size > 1:
            raise ClueError(f"model {self.name} runs in one process (the server does the work): start it without "
                            f"torchrun/accelerate launch and raise --set concurrency=N instead")
        values = self.values
        self.client = ServerClient(base_url=values["base_url"], model=self.served, api_key_env=values["api_key_env"],
                                   concurrency=values["concurrency"], rpm=values["rpm"], timeout=values["timeout"],
                                   retries=values["retries"], echo=context.echo)

    def _client(self) -> ServerClient:
        if self.client is None:
            raise RuntimeError(f"{type(self).__name__}.load(context, texts) was not called")
        return self.client

    def identity(self) -> dict[str, Any]:
        return {"source": "openai", "base_url": self._client().base_url, "model": self.served}

    def likelihood_support(self, *, chat: bool, required: bool, memo: Memo) -> tuple[bool, str]:
        """Chat prompts never (completions take plain text); plain prompts where completions echo log-probabilities."""
        if chat:
            if required:
                raise ClueError(f"model {self.name}: likelihood goes through the completions endpoint, which "
                                f"takes plain text; use --set chat=false, or --set mode=generate")
            return False, "chat prompts are answered by generation"
        capable, why = self._echoes_logprobs(memo)
        if not capable and required:
            raise ClueError(f"{self._client().base_url} cannot score by likelihood: {why}; use --set mode=generate "
                            f"(or mode=auto)")
        return capable, why

    def _echoes_logprobs(self, memo: Memo) -> tuple[bool, str]:
        """Whether completions echo prompt log-probabilities: asked once, a real answer remembered."""
        client = self._client()
        request = {"kind": "probe", "probe": "echo+logprobs"}
        known = memo.recall(request, probe_ok)
        if known is None:
            body = {"prompt": PROBE_PROMPT, "max_tokens": 1, "temperature": 0, "echo": True, "logprobs": 1}
            try:
                response = client.call("completions", body)
            except RequestRefused as exc:
                if exc.unserved or exc.status not in (400, 404, 422):
                    raise  # not serving the model says nothing of echo: the run cannot go on anyway
                # not remembered: a refusal may be the server's passing state (a model loading, a proxy)
                return False, f"its completions endpoint refuses echo + logprobs ({exc.status})"
            if not getattr(response, "choices", None):
                # an answer with nothing in it says nothing of echo either: not remembered, like a refusal
                return False, "its completions answered the probe with no choices"
            known = read_answer(client.where(), probe_answer, probe_ok, response)
            memo.remember(request, known)
        return bool(known["capable"]), str(known["why"])

    def prompting(self, *, chat: bool, thinking: bool) -> Prompting:
        """Plain text, or chat messages carried in the prompt for the server to apply its own template."""
        self.chat = chat
        return Prompting(chat=chat_prompt if chat else None, prefix_in_chat=False,
                         info={"chat": chat, "chat_template": "the server's" if chat else None})

    # -- computing ------------------------------------------------------------------------

    def score_choices(self, requests: Sequence[ScoreRequest], *, ppl: bool, done: Done) -> None:
        """One completions request per example (the prompt's statistics always come back, so ``ppl`` is free)."""
        client = self._client()
        where = client.where()
        for index, response in client.map("completions", [likelihood_body(r) for r in requests]):
            request = requests[index]
            size = len(request.choices)
            entry = read_answer(where, parse_likelihood, lambda e, size=size: likelihood_ok(e, size, True),
                                response, request)
            done({index: entry})

    def generate(self, prompts: Sequence[str], options: GenerateOptions, *, done: Done) -> None:
        """Completions, or chat completions for chat prompts; the server keeps its own thinking budget."""
        client = self._client()
        common: dict[str, Any] = {"max_tokens": options.max_new_tokens, "temperature": options.temperature}
        if options.temperature > 0:
            common["seed"] = options.seed
        bodies = []
        for prompt in prompts:
            if prompt.startswith(CHAT_MARK):
                bodies.append({**json.loads(prompt[len(CHAT_MARK):]), **common})
            else:
                bodies.append({"prompt": prompt, **common})
        where = client.where()
        chat = self.chat
        for index, response in client.map("chat" if chat else "completions", bodies):
            entry = read_answer(where, parse_generation, generation_ok, response, chat)
            done({index: {**entry, "truncated": 0}})

    # -- reporting ------------------------------------------------------------------------

    def info(self) -> dict[str, Any]:
        values = self.values
        client = self.client
        return {"device": client.base_url if client else "", "dtype": "server",
                "server": {"base_url": client.base_url if client else None, "model": self.served,
                           "concurrency": values["concurrency"], "rpm": values["rpm"],
                           "traffic": client.traffic.as_dict() if client else None}}
