"""How prompts are written for a backend's model: shared by every backend, decided by the learner.

A backend only says where its chat template is (:class:`~clue_models_llm.backend.Description`):
a tokenizer whose ``apply_chat_template`` renders messages (transformers, vLLM: the same
rendering, so ``vllm:`` and ``llm:`` are asked byte-identical prompts), a renderer for a
server that applies its own template (``openai:``), or nothing (no chat template: plain
prompts only). :func:`prompting` turns that into the renderer the prompts are built with,
and into what the run's ``model_info["prompt"]`` records about it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from clue_core.plugin import ClueError

if TYPE_CHECKING:
    from clue_models_llm.backend import ChatRender, Description

#: How a chat prompt travels to a server that applies its own template: JSON behind this mark.
CHAT_MARK = "\u0000chat:"


class Asked(str):
    """A prompt (the ``str`` every backend reads) that knows the question it asks.

    ``id`` is the example's, ``text`` the question as a file of recorded answers holds it
    (the prompt itself, or an open question's first turn), ``turn`` which turn of its
    ``turns`` it asks. A backend that computes answers ignores all four; one whose answers
    belong to questions (``answers:<file>``) finds them by these.
    """

    id: str
    text: str
    turn: int
    turns: int

    def __new__(cls, prompt: str, *, id: str, text: str | None = None, turn: int = 0, turns: int = 1) -> Asked:
        asked = super().__new__(cls, prompt)
        asked.id, asked.text, asked.turn, asked.turns = id, prompt if text is None else text, turn, turns
        return asked

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as a plain prompt (gathered across processes, prompts are text)."""
        return str, (str(self),)


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


def chat_prompt(messages: Sequence[Mapping[str, str]], tools: Sequence[Mapping[str, Any]] | None = None) -> str:
    """A chat request as the prompt text the cache keys and the predictions record (a server renders it)."""
    payload: dict[str, Any] = {"messages": list(messages)}
    if tools:
        payload["tools"] = list(tools)
    return CHAT_MARK + json.dumps(payload, ensure_ascii=False)


def prompting(description: Description, *, chat: bool, thinking: bool, thinking_setting: bool,
              name: str) -> Prompting:
    """How ``name``'s prompts are written: chat (``chat``) through its template, a reasoning model asked to
    think (``thinking``: the template's ``enable_thinking`` switch on, the answer prefix not opening the reply).

    ``thinking_setting`` is the ``thinking`` setting as given (recorded; ``thinking`` is it under generation).
    """
    if description.chat_render is not None:
        return Prompting(chat=description.chat_render if chat else None, prefix_in_chat=False,
                         info={"chat": chat, "chat_template": "the server's" if chat else None})
    tokenizer = description.tokenizer
    if tokenizer is None:
        if chat:
            raise ClueError("this model has no chat template; leave chat off (--set chat=false)")
        return Prompting()
    return _template_prompting(tokenizer, chat=chat, thinking=thinking, thinking_setting=thinking_setting,
                               name=name, bos=description.adds_bos)


def _template_prompting(tokenizer: Any, *, chat: bool, thinking: bool, thinking_setting: bool, name: str,
                        bos: bool) -> Prompting:
    """The tokenizer's chat template (its ``enable_thinking`` switch set where it has one)."""
    from clue_models_llm.prompts import sha256

    template = getattr(tokenizer, "chat_template", None)
    template_text = json.dumps(template, sort_keys=True) if isinstance(template, dict) else template
    switch = bool(template_text and "enable_thinking" in template_text)
    render = None
    if chat:
        if not template_text:
            raise ClueError(f"model {name} has no chat template; leave chat off (--set chat=false)")
        extra = {"enable_thinking": thinking} if switch else {}

        def render(messages: Sequence[Mapping[str, str]], tools: Sequence[Any] | None = None) -> str:
            more = {**extra, "tools": list(tools)} if tools else extra
            return tokenizer.apply_chat_template(list(messages), tokenize=False, add_generation_prompt=True, **more)

    info = {"chat": chat, "chat_template_sha256": sha256(template_text) if template_text else None,
            "thinking": thinking_setting, "thinking_switch": switch, "bos": bos}
    return Prompting(chat=render, prefix_in_chat=not thinking, info=info)
