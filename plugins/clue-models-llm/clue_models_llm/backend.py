"""What a language-model backend provides to :class:`~clue_models_llm.learner.LLMLearner`.

The learner decides *what* is asked and how answers are read: the task's prompt, the
few-shot demos, the result cache, the decoding mode and answer extraction. A backend only
answers requests: it loads (or connects to) a model, says who the model is (the cache's
key), scores choices by likelihood, generates text, and describes itself for the run's
manifest. So in-process transformers, an OpenAI-compatible server or a future vLLM engine
differ in one class each, and every backend gets the same prompts, cache and predictions.

Adding a backend is one file and one registration: a class in
``clue_models_llm/backends/<name>.py`` with the methods of :class:`Backend` (subclassing it
gives the optional ones their defaults), and its ``"module:Class"`` reference in
:data:`BACKENDS`. :func:`create_backend` imports it only when a run asks for it, so this
module (and ``hooks.py``) never imports torch, transformers or the OpenAI SDK.

Answers travel as plain dicts, because they are what the result cache stores (JSON):

* a likelihood entry: ``logprobs`` and ``tokens`` (one summed log-probability and token
  count per choice, in order), ``prefix_logprob`` and ``prefix_tokens`` (the prompt's own,
  needed for ``ppl``; ``None`` otherwise), optionally ``truncated`` (prompt tokens cut to
  fit the context) and ``usage`` (a server's token counts);
* a generation entry: ``text`` (what was written, stop string included), ``tokens``,
  ``finish`` (why it ended), ``thinking_tokens``, ``truncated``, optionally ``reasoning``
  (a server's separate reasoning text), ``tool_calls`` and ``usage``.

Both methods report through ``done`` as answers arrive (batch by batch, or one by one), so
the learner commits each to the cache at once and a killed run loses none. ``done`` checks
every entry first (:mod:`clue_models_llm.entries`): one of another shape, or a value no model
gives (a NaN or positive log-probability, a score count other than the choices'), raises a
one-line :class:`ClueError` naming the backend, and is never cached.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from clue_core.plugin import ClueError, RunContext

#: ``done(entries)``: the answers of some requests, by their index in the call's list.
Done = Callable[[Mapping[int, dict[str, Any]]], None]
#: ``(messages, tools=None) -> prompt text``: how chat messages become one prompt (see prompts.ChatRender).
ChatRender = Callable[..., str]


@dataclass(frozen=True, slots=True)
class ScoreRequest:
    """One example to score: its prompt, and the continuations whose log-likelihood after it is asked."""

    prompt: str
    choices: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class GenerateOptions:
    """How to decode, decided by the learner's settings (the same for every backend).

    ``temperature`` 0 is greedy; above 0 samples with ``seed``. ``thinking_tokens`` is the
    budget inside ``<think>…</think>`` where the backend controls decoding itself.
    """

    max_new_tokens: int
    thinking_tokens: int
    stops: tuple[str, ...]
    temperature: float
    seed: int


@dataclass(frozen=True, slots=True)
class Prompting:
    """How prompts are written for this backend's model.

    ``chat`` renders chat messages into a prompt (``None``: plain text prompts),
    ``prefix_in_chat`` whether the task's answer prefix opens the assistant's reply, and
    ``info`` what the run's ``model_info["prompt"]`` records about it (template digests…).
    """

    chat: ChatRender | None = None
    prefix_in_chat: bool = True
    info: dict[str, Any] = field(default_factory=dict)


class Memo(Protocol):
    """Remembered answers about the backend itself (a server's capabilities), kept in the result cache."""

    def recall(self, request: Mapping[str, Any], valid: Callable[[Any], bool]) -> Any | None:
        """The entry stored for ``request`` if ``valid`` accepts it, else ``None``."""
        ...

    def remember(self, request: Mapping[str, Any], entry: Any) -> None:
        """Store ``entry`` for ``request`` (committed at once)."""
        ...


@runtime_checkable
class Backend(Protocol):
    """One model the learner asks. Methods are called in this order: ``load``, ``identity``,
    ``likelihood_support``, ``prompting``, then any number of ``score_choices`` / ``generate``,
    then ``info``.

    Backends are built as ``Class(argument, values, name)``: ``argument`` is what follows the
    model family's prefix (a hub id or folder, a served model's name; ``None`` for a built-in
    model), ``values`` the model's setting values, ``name`` the model name for messages. A
    constructor checks what it can without loading anything (a missing folder, a bad URL),
    so a bad setting stops the run before any task starts.
    """

    def load(self, context: RunContext, texts: Callable[[], Sequence[str]]) -> None:
        """Load the model or connect to it (``texts``: what a model built on the spot, llm-tiny, learns from)."""
        ...

    def identity(self) -> dict[str, Any]:
        """Who answers, as JSON: everything that changes answers (model, path or digest, revision, dtype,
        endpoint). The result cache is keyed by it: a backend must never change it for the same model."""
        ...

    def likelihood_support(self, *, chat: bool, required: bool, memo: Memo) -> tuple[bool, str]:
        """Whether ``score_choices`` can answer this run's prompts, and why (recorded when ``mode=auto``).

        ``required``: the user asked for ``mode=loglikelihood``; a backend that cannot raises a
        :class:`ClueError` saying what to set instead.
        """
        return True, "scored in process"

    def prompting(self, *, chat: bool, thinking: bool) -> Prompting:
        """How prompts are written: the model's chat template (``chat``), a reasoning model asked to think."""
        if chat:
            raise ClueError("this model has no chat template; leave chat off (--set chat=false)")
        return Prompting()

    def score_choices(self, requests: Sequence[ScoreRequest], *, ppl: bool, done: Done) -> None:
        """The log-likelihood of each choice after its prompt, reported through ``done`` (likelihood entries).

        ``ppl`` also asks for the prompt's own log-likelihood. A model with a large vocabulary
        (262k tokens for Gemma) must never hold logits for many choices at once: score in
        batches bounded by rows x positions x vocabulary, or let the server do it.
        """
        ...

    def generate(self, prompts: Sequence[str], options: GenerateOptions, *, done: Done) -> None:
        """What the model writes after each prompt, reported through ``done`` (generation entries)."""
        ...

    def info(self) -> dict[str, Any]:
        """What the run's ``model_info`` records about the backend: ``device`` and ``dtype`` (always), and
        anything else of its own (special tokens, the server and its traffic…) as further keys."""
        ...


#: Backend name → ``"module:Class"``, imported only when a run uses it.
BACKENDS: dict[str, str] = {
    "transformers": "clue_models_llm.backends.transformers:TransformersBackend",
    "openai": "clue_models_llm.backends.openai:OpenAIBackend",
    "answers": "clue_models_llm.backends.recorded:RecordedBackend",
    "vllm": "clue_models_llm.backends.vllm:VLLMBackend",
}


def backend_class(name: str) -> type:
    """The class registered as ``name`` (imported now)."""
    try:
        ref = BACKENDS[name]
    except KeyError:
        raise ClueError(f"no LLM backend {name!r} (known: {', '.join(sorted(BACKENDS))})") from None
    module, _, attribute = ref.partition(":")
    return getattr(importlib.import_module(module), attribute)


def create_backend(name: str, argument: str | None, values: Mapping[str, Any], model: str) -> Backend:
    """A new backend of kind ``name`` for model ``model``; see :class:`Backend` for the arguments."""
    backend = backend_class(name)(argument, values, model)
    if not isinstance(backend, Backend):
        raise TypeError(f"{BACKENDS[name]} does not provide every method of clue_models_llm.backend.Backend")
    return backend
