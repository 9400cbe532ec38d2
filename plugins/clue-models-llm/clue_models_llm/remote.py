"""``openai:<model>``: the LLM learner over an OpenAI-compatible server (vLLM, SGLang, llama.cpp…).

Everything that decides what is asked and how answers are read is the local learner's
(:class:`~clue_models_llm.learner.LLMLearner`): the task's prompt, few-shot demos, the
result cache, answer extraction. Only the two places where a model computes are replaced:

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
to it is cached with the results, so a resumed or repeated run sends nothing. A probe the
server refuses (400/404/422) falls back to generation for this run only and is asked again
next time; a refusal because the server does not serve the model ends the run. Every answer
is committed to the cache as it arrives, so a killed run resumes with no request repeated.
An answer of another shape (a field missing or of another type) is one line naming the
server, and is never cached.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from clue_core.plugin import CLASSIFICATION, MULTIPLE_CHOICE, ClueError, Example, RunContext, Setting, TaskSpec
from clue_models_llm.client import RequestRefused, ServerClient, Usage, server_url, usage_of
from clue_models_llm.entries import generation_ok, likelihood_ok, probe_ok
from clue_models_llm.learner import LLMLearner
from clue_models_llm.prompts import Message, Question, Renderer

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


def likelihood_body(question: Question) -> dict[str, Any]:
    return {"prompt": [question.prompt + choice for choice in question.choices], "max_tokens": 1,
            "temperature": 0, "echo": True, "logprobs": 1}


def _spans(offsets: Sequence[int], length: int) -> list[tuple[int, int]]:
    """``(start, end)`` of every token from its offset and the next token's."""
    return [(start, offsets[i + 1] if i + 1 < len(offsets) else length) for i, start in enumerate(offsets)]


def parse_likelihood(response: Any, question: Question) -> dict[str, Any]:
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


class ServerLearner(LLMLearner):
    """:class:`LLMLearner` whose model is ``model`` behind an OpenAI-compatible server."""

    def __init__(self, task: TaskSpec, model: str, values: Mapping[str, Any], declared: Sequence[Setting],
                 name: str) -> None:
        super().__init__(task, None, values, declared, name)
        server_url(self.values["base_url"])  # a missing or unusable URL stops the run before any task starts
        self.served = model
        self.client: ServerClient | None = None
        self.mode_note = ""
        self.usage_all = Usage()

    # -- setting up -----------------------------------------------------------------------

    def _fitted(self) -> bool:
        return self.client is not None

    def _load(self, train: Sequence[Example], dev: Sequence[Example], context: RunContext) -> None:
        """No weights: the client, and the identity the result cache is keyed by."""
        if context.world_size > 1:
            raise ClueError(f"model {self.name} runs in one process (the server does the work): start it without "
                            f"torchrun/accelerate launch and raise --set concurrency=N instead")
        values = self.values
        self.client = ServerClient(base_url=values["base_url"], model=self.served, api_key_env=values["api_key_env"],
                                   concurrency=values["concurrency"], rpm=values["rpm"], timeout=values["timeout"],
                                   retries=values["retries"], echo=context.echo)
        self.identity = {"source": "openai", "base_url": self.client.base_url, "model": self.served}
        self.device_text = self.client.base_url
        self.dtype_text = "server"

    def _resolve_mode(self) -> None:
        """``auto`` becomes likelihood or generation before any request of the task is sent."""
        asked = self.values["mode"]
        scored = self.task.kind in (CLASSIFICATION, MULTIPLE_CHOICE)
        mode = asked
        if scored and asked in ("loglikelihood", "auto"):
            if self.settings.chat:
                if asked == "loglikelihood":
                    raise ClueError(f"model {self.name}: likelihood goes through the completions endpoint, which "
                                    f"takes plain text; use --set chat=false, or --set mode=generate")
                mode, self.mode_note = "generate", "auto: chat prompts are answered by generation"
            else:
                capable, why = self._echoes_logprobs()
                if not capable and asked == "loglikelihood":
                    raise ClueError(f"{self.client.base_url if self.client else ''} cannot score by likelihood: "
                                    f"{why}; use --set mode=generate (or mode=auto)")
                mode = "loglikelihood" if capable else "generate"
                self.mode_note = f"auto: {why}" if asked == "auto" else ""
        elif asked == "auto":
            mode = "generate"
        if mode != asked and scored:
            self._echo(f"{self.name}: mode {mode} ({self.mode_note})")
        self._use({**self.values, "mode": mode})

    def _echoes_logprobs(self) -> tuple[bool, str]:
        """Whether completions echo prompt log-probabilities: asked once, the answer cached."""
        assert self.client is not None and self.cache is not None
        key = self._key({"kind": "probe", "probe": "echo+logprobs"})
        known = self.cache.get_many([key], lambda key, entry: probe_ok(entry)).get(key)
        if known is None:
            body = {"prompt": PROBE_PROMPT, "max_tokens": 1, "temperature": 0, "echo": True, "logprobs": 1}
            try:
                response = self.client.call("completions", body)
            except RequestRefused as exc:
                if exc.unserved or exc.status not in (400, 404, 422):
                    raise  # not serving the model says nothing of echo: the run cannot go on anyway
                # not remembered: a refusal may be the server's passing state (a model loading, a proxy)
                return False, f"its completions endpoint refuses echo + logprobs ({exc.status})"
            if not getattr(response, "choices", None):
                # an answer with nothing in it says nothing of echo either: not remembered, like a refusal
                return False, "its completions answered the probe with no choices"
            known = read_answer(self.client.where(), probe_answer, probe_ok, response)
            self.cache.put_many({key: known})
        return bool(known["capable"]), str(known["why"])

    def _prepare_prompts(self) -> None:
        """``auto`` decided (with the cache open), then prompts as text or as chat messages for the server."""
        self._resolve_mode()
        chat = chat_prompt if self.settings.chat else None
        self.renderer = Renderer(self.task, demos=self.demos, chat=chat, prefix_in_chat=False)
        self.chat_info = {"chat": self.settings.chat, "chat_template": "the server's" if chat else None}

    # -- computing ------------------------------------------------------------------------

    def _score_missing(self, questions: Sequence[Question], keys: Sequence[str], results: dict[str, Any],
                       ppl: bool) -> None:
        assert self.client is not None
        where = self.client.where()
        for index, response in self.client.map("completions", [likelihood_body(q) for q in questions]):
            question = questions[index]
            size = len(question.choices)
            entry = read_answer(where, parse_likelihood, lambda e, size=size: likelihood_ok(e, size, True),
                                response, question)
            self._store(results, {keys[index]: entry})

    def _generate_missing(self, prompts: Sequence[str], keys: Sequence[str], results: dict[str, Any]) -> None:
        assert self.client is not None
        settings = self.settings
        common: dict[str, Any] = {"max_tokens": settings.max_new_tokens, "temperature": settings.temperature}
        if settings.temperature > 0 and self.context is not None:
            common["seed"] = self.context.seed
        chat = settings.chat
        bodies = []
        for prompt in prompts:
            if prompt.startswith(CHAT_MARK):
                bodies.append({**json.loads(prompt[len(CHAT_MARK):]), **common})
            else:
                bodies.append({"prompt": prompt, **common})
        where = self.client.where()
        for index, response in self.client.map("chat" if chat else "completions", bodies):
            entry = read_answer(where, parse_generation, generation_ok, response, chat)
            self._store(results, {keys[index]: {**entry, "truncated": 0}})

    # -- reporting ------------------------------------------------------------------------

    def _count(self, examples: Sequence[Example], predictions: Sequence[Any]) -> None:
        super()._count(examples, predictions)
        for prediction in predictions:
            raw = prediction.raw if isinstance(prediction.raw, dict) else {}
            for usage in raw.get("usage") or []:
                self.usage_all.add(usage)

    def run_info(self) -> dict[str, Any]:
        info = super().run_info()
        # what only a local model has: its token budget for thinking, its special tokens
        info["decoding"].pop("thinking_tokens", None)
        info["prompt"].pop("bos", None)
        info.pop("eos_token_ids", None)
        values = self.values
        info["server"] = {"base_url": self.client.base_url if self.client else None, "model": self.served,
                          "concurrency": values["concurrency"], "rpm": values["rpm"],
                          "traffic": self.client.traffic.as_dict() if self.client else None}
        if self.mode_note:
            info["mode_note"] = self.mode_note
        info["usage"] = self.usage_all.as_dict(values["price_prompt"], values["price_completion"],
                                               values["currency"])
        return info
