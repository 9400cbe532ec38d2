"""What the learner and a backend exchange: a request to score, how to decode, who answers.

Apart from :mod:`clue_models_llm.backend` (which exports these names too, imported on first use)
so that listing models, which reads every backend module's declaration, never builds these
dataclasses: a backend module names them for type checkers at its top and imports
:class:`Description` inside ``describe``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

#: ``(messages, tools=None) -> prompt text`` (``clue_models_llm.backend.ChatRender``, named here too, so
#: that this module imports nothing of the plugin's).
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
class Description:
    """Who answers and on what, as :meth:`Backend.describe` says it.

    ``identity`` is everything that changes answers (model, path or digest, revision, dtype,
    endpoint), as JSON: the result cache is keyed by it, so it must never change for the same
    model (the learner keeps the one described right after ``load``). ``device``, ``dtype``
    and ``info`` (any further keys of the backend's own: special tokens, the server and its
    traffic…) are what the run's ``model_info`` records, described again when it is written.
    How chat prompts are written is the learner's (:mod:`clue_models_llm.prompting`); a
    backend only says where its chat template is: a ``tokenizer`` with ``apply_chat_template``
    (``adds_bos``: the tokenizer puts a BOS token first), or ``chat_render`` for a server
    that applies its own. Neither: the model has no chat template. ``computed`` false: the
    answers are read, not computed (a file of recorded answers): every prompt is a
    :class:`~clue_models_llm.prompting.Asked` answered for its own question, never cached or
    shown as progress, and an answer entry may say ``missing`` (no answer to that question)
    and ``recorded`` (where it was found: kept in the prediction, its text kept as it is).
    """

    identity: Mapping[str, Any]
    device: str = ""
    dtype: str = ""
    info: Mapping[str, Any] = field(default_factory=dict)
    tokenizer: Any = None
    adds_bos: bool = False
    chat_render: ChatRender | None = None
    computed: bool = True
