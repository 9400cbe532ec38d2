"""The engines behind the OpenAI test server (:mod:`tests.support.openai_server`): what answers a request.

:class:`ScriptedEngine` answers from a function (no model, starts instantly); :class:`ModelEngine`
answers from a LOCAL model folder as vLLM would; :func:`save_tiny_granite` writes such a folder.
torch and transformers are imported by :class:`ModelEngine` and :func:`save_tiny_granite` alone.
"""

from __future__ import annotations

import json
import random
import threading
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.support.openai_protocol import (
    CHAT,
    CHAT_TEMPLATE,
    CHAT_TEMPLATE_TEXT,
    COMPLETIONS,
    AnswerFunction,
    ChatResult,
    CompletionResult,
    RequestError,
    Sampling,
    check_messages,
    message_text,
)

# ---------------------------------------------------------------------------------------------- scripted


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


# ---------------------------------------------------------------------------------------------- a local model


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
