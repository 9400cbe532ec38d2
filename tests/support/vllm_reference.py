"""A stand-in ``vllm`` module with vLLM's real output shapes, computed by a transformers model on the CPU.

vLLM needs a GPU and its own torch, so neither CI nor this project's machines install it.
The ``vllm:`` backend is checked instead against this module, installed as ``vllm`` in
``sys.modules`` (:func:`install`): its ``LLM`` loads a ``save_pretrained`` folder with
transformers and answers ``generate`` with objects of the shapes of vLLM 0.33.0
(``RequestOutput``: ``prompt_token_ids``, ``prompt_logprobs``, ``num_cached_tokens``,
``outputs``; ``CompletionOutput``: ``text``, ``token_ids``, ``finish_reason``,
``stop_reason``; ``Logprob``: ``logprob``, ``rank``, ``decoded_token``), and with vLLM's
behaviour where the backend depends on it:

* ``SamplingParams`` refuses argument names vLLM 0.33 does not take, and defaults
  ``skip_reading_prefix_cache`` to ``True`` when prompt log-probabilities are asked;
* prefix caching in blocks of :data:`BLOCK` tokens: a request reads the longest run of whole
  blocks an earlier request computed (never its last token), and its ``prompt_logprobs``
  is ``None`` followed by entries from position ``num_cached_tokens + 1`` only;
* stop strings are looked for in the generated text, which ends after the stop string with
  ``include_stop_str_in_output``; an end-of-sequence token ends with ``finish_reason="stop"``
  and ``stop_reason=None``, its id kept in ``token_ids``.

Used by ``tests/models_llm/test_vllm_*.py`` and by ``benchmarks/vllm_check.py --self-check``
(which puts the repository root on ``sys.path`` to import it). It lives under ``tests/``, not in
``clue_models_llm``, because nothing installed uses it: a stand-in shipped in the package would be
one more module for users to mistake for part of the backend.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import torch

__version__ = "0.33.0+reference"
#: Tokens per prefix-cache block (vLLM's default block size).
BLOCK = 16
#: ``SamplingParams`` fields of vLLM 0.33.0 this stand-in understands (the real one has more).
FIELDS = ("n", "temperature", "top_p", "top_k", "seed", "stop", "stop_token_ids", "max_tokens", "logprobs",
          "prompt_logprobs", "detokenize", "skip_special_tokens", "include_stop_str_in_output",
          "skip_reading_prefix_cache")


@dataclass
class Logprob:
    logprob: float
    rank: int | None = None
    decoded_token: str | None = None


@dataclass
class CompletionOutput:
    index: int
    text: str
    token_ids: Sequence[int]
    cumulative_logprob: float | None
    logprobs: Any
    finish_reason: str | None = None
    stop_reason: int | str | None = None


@dataclass
class RequestOutput:
    request_id: str
    prompt: str | None
    prompt_token_ids: list[int] | None
    prompt_logprobs: list[dict[int, Logprob] | None] | None
    outputs: list[CompletionOutput]
    finished: bool
    num_cached_tokens: int | None = None


class SamplingParams:
    """vLLM's sampling parameters, as far as the backend uses them; unknown names are refused as vLLM does."""

    __struct_fields__ = FIELDS

    def __init__(self, **kwargs: Any) -> None:
        unknown = sorted(set(kwargs) - set(FIELDS))
        if unknown:
            raise TypeError(f"Unexpected keyword argument(s) {unknown}")
        defaults = {"n": 1, "temperature": 1.0, "top_p": 1.0, "top_k": 0, "seed": None, "stop": None,
                    "stop_token_ids": None, "max_tokens": 16, "logprobs": None, "prompt_logprobs": None,
                    "detokenize": True, "skip_special_tokens": True, "include_stop_str_in_output": False,
                    "skip_reading_prefix_cache": None}
        values = {**defaults, **kwargs}
        if isinstance(values["stop"], str):
            values["stop"] = [values["stop"]]
        if values["stop"] and not values["detokenize"]:
            raise ValueError("stop strings need detokenize=True")
        if values["max_tokens"] is not None and values["max_tokens"] < 1:
            raise ValueError(f"max_tokens must be at least 1, got {values['max_tokens']}")
        if values["skip_reading_prefix_cache"] is None:
            values["skip_reading_prefix_cache"] = values["prompt_logprobs"] is not None
        self.__dict__.update(values)


@dataclass
class _Cache:
    """Which whole blocks of tokens have been computed (by their token prefix)."""

    blocks: set[tuple[int, ...]] = field(default_factory=set)

    def hit(self, ids: Sequence[int]) -> int:
        cached = 0
        while cached + BLOCK <= len(ids) - 1 and tuple(ids[:cached + BLOCK]) in self.blocks:
            cached += BLOCK
        return cached

    def store(self, ids: Sequence[int]) -> None:
        for end in range(BLOCK, len(ids) + 1, BLOCK):
            self.blocks.add(tuple(ids[:end]))


class LLM:
    """vLLM's offline engine over a transformers model (``model``: a ``save_pretrained`` folder)."""

    #: Every engine built, newest last (what a test inspects).
    instances: ClassVar[list[LLM]] = []

    def __init__(self, model: str, **options: Any) -> None:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.options = dict(options)
        self.tokenizer = AutoTokenizer.from_pretrained(model)
        self.model = AutoModelForCausalLM.from_pretrained(model, dtype=torch.float32).eval()
        self.model_config = types.SimpleNamespace(dtype=torch.float32, max_model_len=options.get("max_model_len")
                                                  or self.model.config.max_position_embeddings)
        self.cache = _Cache()
        self.calls: list[list[tuple[list[int], SamplingParams]]] = []
        LLM.instances.append(self)

    def get_tokenizer(self) -> Any:
        return self.tokenizer

    def generate(self, prompts: Sequence[Any], sampling_params: Any = None, *, use_tqdm: bool = True
                 ) -> list[RequestOutput]:
        params = sampling_params if isinstance(sampling_params, list) else [sampling_params] * len(prompts)
        if len(params) != len(prompts):
            raise ValueError("the lengths of prompts and sampling_params must be the same")
        asked = [(list(p["prompt_token_ids"]), sp) for p, sp in zip(prompts, params)]
        self.calls.append(asked)
        return [self._answer(str(i), ids, sp) for i, (ids, sp) in enumerate(asked)]

    def _logprobs(self, ids: Sequence[int]) -> torch.Tensor:
        with torch.inference_mode():
            logits = self.model(input_ids=torch.tensor([list(ids)])).logits[0].float()
        return torch.log_softmax(logits, dim=-1)

    def _answer(self, request_id: str, ids: list[int], params: SamplingParams) -> RequestOutput:
        if len(ids) + (params.max_tokens or 1) > self.model_config.max_model_len + 1:
            raise ValueError(f"prompt of {len(ids)} tokens is longer than max_model_len")
        caching = self.options.get("enable_prefix_caching", True)
        cached = self.cache.hit(ids) if caching and not params.skip_reading_prefix_cache else 0
        prompt_logprobs, table = None, None
        if params.prompt_logprobs is not None:
            table = self._logprobs(ids)
            prompt_logprobs = [None]
            for position in range(cached + 1, len(ids)):
                row = table[position - 1]
                token = ids[position]
                ranks = int((row > row[token]).sum()) + 1
                entry = {token: Logprob(float(row[token]), ranks, self.tokenizer.decode([token]))}
                for rank, other in enumerate(row.topk(params.prompt_logprobs).indices.tolist(), start=1):
                    entry.setdefault(other, Logprob(float(row[other]), rank, self.tokenizer.decode([other])))
                prompt_logprobs.append(entry)
        if caching:
            self.cache.store(ids)
        completion = self._complete(ids, params, None if table is None else table[-1])
        return RequestOutput(request_id, None, list(ids), prompt_logprobs, [completion], True,
                             num_cached_tokens=cached)

    def _complete(self, ids: list[int], params: SamplingParams, first: torch.Tensor | None) -> CompletionOutput:
        """Decode after ``ids`` (``first``: the next token's log-probabilities, when already computed)."""
        eos = self.tokenizer.eos_token_id
        generator = torch.Generator().manual_seed(params.seed) if params.seed is not None else None
        written: list[int] = []
        text, finish, reason = "", "length", None
        while len(written) < params.max_tokens:
            row = first if first is not None and not written else self._logprobs(ids + written)[-1]
            if params.temperature <= 0:
                token = int(row.argmax())
            else:
                token = int(torch.multinomial(torch.softmax(row / params.temperature, -1), 1, generator=generator))
            written.append(token)
            if token == eos or token in (params.stop_token_ids or ()):
                finish, reason = "stop", None if token == eos else token
                break
            if not params.detokenize:
                continue
            text = self.tokenizer.decode(written, skip_special_tokens=params.skip_special_tokens)
            found = [(text.find(s), s) for s in params.stop or () if s in text]
            if found:
                at, stop = min(found)
                text = text[:at + len(stop)] if params.include_stop_str_in_output else text[:at]
                finish, reason = "stop", stop
                break
        return CompletionOutput(0, text, written, None, None, finish, reason)


def module() -> types.ModuleType:
    """This stand-in as a module named ``vllm``."""
    stand_in = types.ModuleType("vllm")
    stand_in.__version__ = __version__
    stand_in.LLM = LLM
    stand_in.SamplingParams = SamplingParams
    return stand_in


def install() -> types.ModuleType:
    """Put the stand-in in ``sys.modules["vllm"]`` (tests use ``monkeypatch.setitem`` instead)."""
    sys.modules["vllm"] = module()
    return sys.modules["vllm"]
