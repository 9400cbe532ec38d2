"""What a language-model backend provides to :class:`~clue_models_llm.learner.LLMLearner`, and how one is registered.

The learner decides *what* is asked and how answers are read: the task's prompt, the
few-shot demos, the chat template's use, the result cache, the decoding mode and answer
extraction. A backend only answers requests: it loads (or connects to) a model, describes
who the model is (the cache's key) and what it runs on, says whether it can score by
likelihood, scores choices, and generates text. So in-process transformers, an
OpenAI-compatible server, vLLM or a file of recorded answers differ in one class each, and
every backend gets the same prompts, cache and predictions.

Adding a backend is one file and one line: a module with a class that has the five
methods of :class:`Backend` (subclassing it gives ``likelihood_support`` its default) and,
next to it, ``BACKEND = BackendInfo(family=..., description=..., settings=..., create=Class)``;
then its module path on one line of :data:`REGISTRY` (a backend of this plugin) or of the
``clue_models_llm.backends`` entry-point group (a third party's package). ``hooks.py``
builds one model name per declaration from :func:`declared`, and one generic factory
(:mod:`clue_models_llm.factory`) builds every learner. A backend module imports at its top
only what is cheap (this module, the settings, ``clue_core.plugin``): torch, transformers,
vLLM or the OpenAI SDK are imported inside its methods, so listing models stays fast.

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
from functools import cache
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from clue_core.plugin import ClueError, Setting

if TYPE_CHECKING:  # clue_core.context only for type checkers: listing models must not import it
    from clue_core.plugin import RunContext
    from clue_models_llm.catalogue import CatalogueEntry
    from clue_models_llm.exchange import Description, GenerateOptions, ScoreRequest

#: Exported here, defined in :mod:`clue_models_llm.exchange` and imported on first use (see there why).
_EXCHANGE = ("ScoreRequest", "GenerateOptions", "Description")


def __getattr__(name: str) -> Any:
    if name in _EXCHANGE:
        from clue_models_llm import exchange

        return getattr(exchange, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


#: ``done(entries)``: the answers of some requests, by their index in the call's list.
Done = Callable[[Mapping[int, dict[str, Any]]], None]
#: ``(messages, tools=None) -> prompt text``: how chat messages become one prompt (see prompts.ChatRender).
ChatRender = Callable[..., str]

#: This plugin's backends: one module each, one line each (the module declares ``BACKEND``).
REGISTRY: tuple[str, ...] = (
    "clue_models_llm.backends.transformers",
    "clue_models_llm.backends.openai",
    "clue_models_llm.backends.vllm",
    "clue_models_llm.backends.llamacpp",
    "clue_models_llm.backends.recorded",
)
#: The entry-point group a third party's package registers a backend module in (its pyproject's one line).
ENTRY_POINTS = "clue_models_llm.backends"


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
    """One model the learner asks. Methods are called in this order: ``load``, ``describe``,
    ``likelihood_support``, then any number of ``score_choices`` / ``generate``, then
    ``describe`` again for the run's ``model_info``.

    Backends are built as ``Class(argument, values, name)``: ``argument`` is what follows the
    model family's prefix (a hub id or folder, a served model's name; ``None`` for a model
    named without one), ``values`` the model's setting values, ``name`` the model name for
    messages. A constructor checks what it can without loading anything (a missing folder,
    a bad URL), so a bad setting stops the run before any task starts.
    """

    def load(self, context: RunContext, texts: Callable[[], Sequence[str]]) -> None:
        """Load the model or connect to it (``texts``: what a model built on the spot, llm-tiny, learns from)."""
        ...

    def describe(self) -> Description:
        """Who answers (the cache's key), on what device and dtype, and where its chat template is."""
        ...

    def likelihood_support(self, *, chat: bool, required: bool, memo: Memo) -> tuple[bool, str]:
        """Whether ``score_choices`` can answer this run's prompts, and why (recorded when ``mode=auto``).

        ``required``: the user asked for ``mode=loglikelihood``; a backend that cannot raises a
        :class:`ClueError` saying what to set instead.
        """
        return True, "scored in process"

    def score_choices(self, requests: Sequence[ScoreRequest], *, ppl: bool, done: Done) -> None:
        """The log-likelihood of each choice after its prompt, reported through ``done`` (likelihood entries).

        ``ppl`` also asks for the prompt's own log-likelihood. A model with a large vocabulary
        (262k tokens for Gemma) must never hold logits for many choices at once: score in
        batches bounded by rows x positions x vocabulary, or let the server do it.
        """
        ...

    def generate(self, prompts: Sequence[str], options: GenerateOptions, *, done: Done) -> None:
        """What the model writes after each prompt, reported through ``done`` (generation entries).

        Each prompt is a :class:`~clue_models_llm.prompting.Asked` (a ``str``) that also names
        the question it asks, for a backend whose answers belong to questions (recorded answers).
        """
        ...


@dataclass(frozen=True, slots=True)
class BackendInfo:
    """What a backend module declares next to its class (``BACKEND``): the model name it answers under.

    ``family`` is the name: ``vllm`` for ``vllm:<argument>``, or a whole model name where
    ``argument`` is empty (``llm-tiny``, built with no argument). ``argument`` says what
    follows the prefix, in the one line a bare ``vllm`` gets (``a checkpoint:
    vllm:<hub id or local folder>``). ``settings`` are the kernel's declarations of every
    value the learner and the backend read, ``create`` the class (or ``"module:Class"``).
    ``check(values)`` refuses values that cannot work together before anything is built;
    ``fixed`` are values the model always runs with, whatever was set; ``catalogue`` lists
    well-known arguments as model names of their own (``llm:Qwen/Qwen3-8B``); ``size_class``
    is what ``clue-core list models`` shows for a model named without argument. ``unavailable``
    is set by :func:`declared` alone, for a third party's module that failed to import: the
    one line that using the family says instead of building it.
    """

    family: str
    description: str
    settings: tuple[Setting, ...]
    create: type | str
    argument: str = ""
    check: Callable[[Mapping[str, Any]], None] | None = None
    fixed: Mapping[str, Any] = field(default_factory=dict)
    catalogue: tuple[CatalogueEntry, ...] = ()
    size_class: str = ""
    unavailable: str = ""

    def backend_class(self) -> type:
        """The class (imported now where ``create`` is a reference)."""
        if self.unavailable:
            raise ClueError(self.unavailable)
        if not isinstance(self.create, str):
            return self.create
        module, _, attribute = self.create.partition(":")
        return getattr(importlib.import_module(module), attribute)


def _module_declarations(path: str) -> tuple[BackendInfo, ...]:
    """The ``BACKEND`` of one module: a :class:`BackendInfo`, or a tuple of them (a module with several names)."""
    declared = getattr(importlib.import_module(path), "BACKEND", None)
    infos = declared if isinstance(declared, tuple) else (declared,)
    if not infos or not all(isinstance(info, BackendInfo) for info in infos):
        raise TypeError(f"backend module {path} declares no BACKEND = BackendInfo(...) (clue_models_llm.backend)")
    return infos


@cache
def declared() -> tuple[BackendInfo, ...]:
    """Every backend declared: this plugin's :data:`REGISTRY`, then the ``clue_models_llm.backends`` entry points.

    A third party's module that fails to import (its SDK missing) or declares no ``BACKEND`` must
    not take this plugin's other models down with it: its entry point's name is still listed as a
    family, and using it says, in one line, which package and what error (this plugin's own
    modules failing is a bug, and the plugin's error row says so).
    """
    infos = [info for path in REGISTRY for info in _module_declarations(path)]
    seen = set(REGISTRY)
    for name, path, package in _third_party():
        if path in seen:
            continue
        seen.add(path)
        try:
            infos += _module_declarations(path)
        except Exception as exc:  # anything its import raises: said when the family is used
            why = " ".join(f"{type(exc).__name__}: {exc}".split())
            infos.append(BackendInfo(family=name, description=f"unavailable: {package}'s backend {path} failed "
                                     f"to import ({why})", settings=(), create="", argument="a model name",
                                     unavailable=f"model {name!r} is unavailable: the backend module {path} of "
                                                 f"package {package} failed to import: {why}"))
    return tuple(infos)


def _third_party() -> list[tuple[str, str, str]]:
    """``(entry point name, module, package)`` of each ``clue_models_llm.backends`` entry point, by name.

    Read as the kernel reads its plugins' (``installed_entry_points``: listing models imports no
    ``importlib.metadata``, whose import and parsing of every distribution cost more than this plugin's
    modules do); a distribution shadowed by one of its name earlier on ``sys.path`` declares nothing.
    """
    from clue_core.plugin import installed_entry_points

    return sorted((point.name, point.value.partition(":")[0], point.dist.name or "?")
                  for point in installed_entry_points(ENTRY_POINTS))


def backend_info(family: str) -> BackendInfo:
    """The declaration of model name ``family`` (``llm``, ``llm-tiny``, ``openai``…)."""
    for info in declared():
        if info.family == family:
            return info
    raise ClueError(f"no LLM backend {family!r} (known: {', '.join(sorted(i.family for i in declared()))})")


def factory_name(family: str) -> str:
    """The attribute ``create.<name>`` of :mod:`clue_models_llm.factory` that builds ``family`` (an identifier:
    ``llm-tiny`` is ``create.llm_tiny``)."""
    return "".join(char if char.isalnum() else "_" for char in family)


def create_backend(family: str, argument: str | None, values: Mapping[str, Any], model: str) -> Backend:
    """A new backend for model name ``family`` (``model`` names it in messages); see :class:`Backend`."""
    info = backend_info(family)
    backend = info.backend_class()(argument, values, model)
    if not isinstance(backend, Backend):
        raise TypeError(f"{info.backend_class().__qualname__} ({family}) does not provide every method of "
                        f"clue_models_llm.backend.Backend")
    return backend
