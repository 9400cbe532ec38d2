"""The OpenAI-compatible backend: ``openai:<model>``, a model behind any such server (vLLM, SGLang, llama.cpp…).

Everything that decides what is asked and how answers are read is the learner's
(:class:`~clue_models_llm.learner.LLMLearner`): the task's prompt, few-shot demos, the
result cache, answer extraction. This backend only sends requests and reads answers:

* likelihood: one completions request per example, its prompt a list with ``prompt +
  choice`` for every choice, ``echo`` and ``logprobs`` on; or, for a server that takes one
  prompt per request (llama.cpp's), one request per choice, concurrently
  (:mod:`~clue_models_llm.backends.openai_likelihood` reads the echoes);
* generation: completions (plain prompts) or chat completions (``chat=true``: the server
  applies the model's chat template), greedy unless ``temperature`` > 0. A reasoning
  model's ``reasoning_content`` is kept apart from the answer; tool calls come back as
  ``tool_calls``.

``mode=auto`` scores by likelihood where the server echoes prompt log-probabilities and
generates elsewhere; whether it does is asked once (a one-token probe, in the shape the run sends: a list of
prompts, then one prompt where the list is refused), and a real answer
to it is remembered in the result cache, so a resumed or repeated run sends nothing. A
probe the server refuses (400/404/422) falls back to generation for this run only and is
asked again next time; a refusal because the server does not serve the model ends the run.
Every answer is reported as it arrives (the learner commits it to the cache at once), so a
killed run resumes with no request repeated. An answer of another shape (a field missing or
of another type) is one line naming the server, and is never cached.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from clue_core.plugin import ClueError
from clue_models_llm.backend import Backend, BackendInfo, Done, Memo
from clue_models_llm.settings import SERVER

if TYPE_CHECKING:  # for type checkers only: listing models imports this module's declaration, not these
    from clue_core.plugin import RunContext
    from clue_models_llm.client import ServerClient
    from clue_models_llm.exchange import Description, GenerateOptions, ScoreRequest
    from clue_models_llm.prompting import CHAT_MARK, chat_prompt

__all__ = ["CHAT_MARK", "OpenAIBackend", "chat_prompt", "parse_generation", "read_answer"]


def __getattr__(name: str) -> Any:
    """``CHAT_MARK`` and ``chat_prompt`` (:mod:`clue_models_llm.prompting`'s), imported when first asked for."""
    if name in ("CHAT_MARK", "chat_prompt"):
        from clue_models_llm import prompting

        return getattr(prompting, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def read_answer(where: str, parse: Callable[..., dict[str, Any]], valid: Callable[[Any], bool], response: Any,
                *args: Any) -> dict[str, Any]:
    """``parse(response, *args)``, checked by ``valid``: an answer of another shape is one line naming ``where``."""
    from clue_models_llm.backends.openai_likelihood import SHAPE_ERRORS

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
    from clue_models_llm.client import usage_of

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
    import json  # here, not at the top: listing models imports this module and json is not loaded yet

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
        from clue_models_llm.client import server_url

        self.values = dict(values)
        server_url(self.values["base_url"])  # a missing or unusable URL stops the run before any task starts
        self.served = model
        self.name = name
        self.client: ServerClient | None = None
        self.chat = bool(self.values.get("chat"))
        #: The server takes one prompt per completions request (found by the probe, or by a refused list).
        self.one_prompt = False
        self.memo: Memo | None = None

    # -- setting up -----------------------------------------------------------------------

    def load(self, context: RunContext, texts: Callable[[], Sequence[str]]) -> None:
        """No weights: the client (nothing is sent until the first request)."""
        if context.world_size > 1:
            raise ClueError(f"model {self.name} runs in one process (the server does the work): start it without "
                            f"torchrun/accelerate launch and raise --set concurrency=N instead")
        from clue_models_llm.client import ServerClient

        values = self.values
        self.client = ServerClient(base_url=values["base_url"], model=self.served, api_key_env=values["api_key_env"],
                                   concurrency=values["concurrency"], rpm=values["rpm"], timeout=values["timeout"],
                                   retries=values["retries"], echo=context.echo)

    def _client(self) -> ServerClient:
        if self.client is None:
            raise RuntimeError(f"{type(self).__name__}.load(context, texts) was not called")
        return self.client

    def describe(self) -> Description:
        """The served model at its URL; the server's own chat template (chat messages travel as JSON)."""
        values, client = self.values, self.client
        url = client.base_url if client else None
        server = {"base_url": url, "model": self.served, "concurrency": values["concurrency"], "rpm": values["rpm"],
                  "traffic": client.traffic.as_dict() if client else None}
        from clue_models_llm.exchange import Description
        from clue_models_llm.prompting import chat_prompt

        return Description(identity={"source": "openai", "base_url": url, "model": self.served},
                           device=url or "", dtype="server", info={"server": server},
                           chat_render=chat_prompt)

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
        """Whether completions echo prompt log-probabilities, and in which shape: asked once, remembered."""
        from clue_models_llm.backends.openai_likelihood import probe

        client = self._client()
        known = probe(client, memo, lambda parse, valid, response: read_answer(client.where(), parse, valid, response))
        self.memo = memo
        if known["capable"] and known["one_prompt"]:
            self._one_prompt_per_request()
        return bool(known["capable"]), str(known["why"])

    def _one_prompt_per_request(self, why: str = "") -> None:
        """Score each choice in its own request from now on, and say so once."""
        if self.one_prompt:
            return
        self.one_prompt = True
        client = self._client()
        client.echo(f"{self.name}: {client.base_url} takes one prompt per request{why}: each choice is scored in "
                    f"its own request, {client.concurrency} in flight")

    # -- computing ------------------------------------------------------------------------

    def score_choices(self, requests: Sequence[ScoreRequest], *, ppl: bool, done: Done) -> None:
        """One completions request per example, or per choice (the prompt's statistics always come back: ``ppl``
        is free). A list refused before any answer arrived switches to one request per choice."""
        from clue_models_llm.backends.openai_likelihood import (
            PROBE_REQUEST,
            likelihood_body,
            lists_refused,
            parse_likelihood,
        )
        from clue_models_llm.client import RequestRefused
        from clue_models_llm.entries import likelihood_ok

        if self.one_prompt:
            self._score_split(requests, done)
            return
        client = self._client()
        where = client.where()
        answered: set[int] = set()
        try:
            for index, response in client.map("completions", [likelihood_body(r) for r in requests]):
                request = requests[index]
                size = len(request.choices)
                entry = read_answer(where, parse_likelihood, lambda e, size=size: likelihood_ok(e, size, True),
                                    response, request)
                done({index: entry})
                answered.add(index)
        except RequestRefused as exc:
            if answered or not lists_refused(exc) or all(len(r.choices) < 2 for r in requests):
                raise
            client.resume()
            self._one_prompt_per_request(f" (a list of prompts is refused: {exc.status})")
            if self.memo is not None:
                self.memo.remember(PROBE_REQUEST, {"capable": True, "one_prompt": True, "why": "the server echoes "
                                                   "prompt log-probabilities, one prompt per request (a list of "
                                                   f"prompts was refused while scoring: {exc.status})"})
            self._score_split(requests, done)

    def _score_split(self, requests: Sequence[ScoreRequest], done: Done) -> None:
        """Every choice in its own request, all through the client's concurrency; an example is reported when
        its last choice is answered."""
        from clue_models_llm.backends.openai_likelihood import parse_split, single_bodies
        from clue_models_llm.entries import likelihood_ok

        client = self._client()
        where = client.where()
        owners = [(index, slot) for index, request in enumerate(requests) for slot in range(len(request.choices))]
        bodies = [body for request in requests for body in single_bodies(request)]
        waiting: dict[int, list[Any]] = {index: [None] * len(r.choices) for index, r in enumerate(requests)}
        for position, response in client.map("completions", bodies):
            index, slot = owners[position]
            got = waiting[index]
            got[slot] = response
            if all(answer is not None for answer in got):
                request = requests[index]
                size = len(request.choices)
                entry = read_answer(where, parse_split, lambda e, size=size: likelihood_ok(e, size, True), got,
                                    request)
                del waiting[index]
                done({index: entry})

    def generate(self, prompts: Sequence[str], options: GenerateOptions, *, done: Done) -> None:
        """Completions, or chat completions for chat prompts; the server keeps its own thinking budget."""
        from clue_models_llm.entries import generation_ok

        client = self._client()
        common: dict[str, Any] = {"max_tokens": options.max_new_tokens, "temperature": options.temperature}
        if options.temperature > 0:
            common["seed"] = options.seed
        import json

        from clue_models_llm.prompting import CHAT_MARK

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


BACKEND = BackendInfo(
    "openai", "a model behind any OpenAI-compatible server (vLLM, SGLang, llama.cpp, transformers serve, hosted "
    "APIs), openai:<served name> --set base_url=…: likelihood (completions echo + logprobs) or generation, "
    "concurrent, retried, cached", SERVER, OpenAIBackend,
    argument="the served model's name: openai:<name> (what the server's /v1/models lists)")
