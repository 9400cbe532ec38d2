"""Batched generation with stop strings and a separate token budget for thinking.

The loop is written here, not taken from ``model.generate``, so that nothing of a model's
own ``generation_config`` (sampling, temperature, top-p, repetition penalties) leaks into
a run: decoding is greedy unless ``temperature`` > 0, and every choice is recorded.

Per row: tokens inside ``<think>…</think>`` count against ``thinking_tokens``; when the
budget is spent the block is closed for the model (``</think>`` is written into its
output) and the answer begins. The answer gets ``max_new_tokens``; it ends at an
end-of-sequence token or at a stop string found after its first non-blank character.
Finished rows leave the batch (their cache rows are dropped), so a batch runs only as
long as its longest answer.

Batches hold prompts of similar lengths (longest first), prompts sharing a prefix (several
questions about one passage) next to each other. The tokens every prompt begins with
(instructions, few-shot demos) are computed once for the whole call, the tokens a group of
a batch's prompts shares once for the group, in a row of their own, and the rows' caches
joined (:mod:`clue_models_llm.generation_batches`). A row's computation is its unpadded
one (same positions, every padding column masked), so greedy answers equal one prompt at a
time.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from clue_models_llm.extract import THINK_CLOSE, THINK_OPEN, cut_at_stop
from clue_models_llm.generation_batches import PrefixCache, batch_order
from clue_models_llm.runtime import forward, input_device, left_padded, new_cache

#: Written for the model when its thinking budget is spent.
CLOSE_THINKING = f"\n{THINK_CLOSE}\n\n"


@dataclass(frozen=True, slots=True)
class Generated:
    """What came back: the decoded text (stop string included), tokens and why it ended."""

    text: str
    tokens: int
    finish: str
    thinking_tokens: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {"text": self.text, "tokens": self.tokens, "finish": self.finish,
                "thinking_tokens": self.thinking_tokens}

    @classmethod
    def of(cls, data: dict[str, Any]) -> Generated:
        return cls(data["text"], data["tokens"], data["finish"], data.get("thinking_tokens", 0))


@dataclass
class _Row:
    ids: list[int]
    thinking: bool
    generator: torch.Generator | None
    forced: list[int]
    closing: bool = False
    think_count: int = 0
    answer_count: int = 0
    finish: str = ""


class Generator:
    """Generates for batches of prompts (token ids) with one model and tokenizer."""

    def __init__(self, model: Any, tokenizer: Any, *, batch_size: int, max_new_tokens: int, thinking_tokens: int,
                 stops: Sequence[str], temperature: float, eos_ids: Sequence[int], pad_id: int, seed: int) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.batch_size = batch_size
        self.max_new_tokens = max_new_tokens
        self.thinking_tokens = thinking_tokens
        self.stops = tuple(stops)
        self.temperature = temperature
        self.eos_ids = frozenset(eos_ids)
        self.pad_id = pad_id
        self.seed = seed
        self.device = input_device(model)
        self.close_ids = tokenizer(CLOSE_THINKING, add_special_tokens=False).input_ids
        self.prefixes: PrefixCache | None = None

    def generate(self, prompts: Sequence[Sequence[int]], thinking: Sequence[bool] | None = None,
                 done: Callable[[list[int], list[Generated]], None] | None = None) -> list[Generated]:
        """One generation per prompt, in prompt order; ``thinking[i]``: prompt i ends inside a think block."""
        thinking = list(thinking) if thinking is not None else [False] * len(prompts)
        order = batch_order(prompts)
        results: list[Generated | None] = [None] * len(prompts)
        self.prefixes = PrefixCache(self.model, prompts, self.device, new_cache)
        try:
            for start in range(0, len(order), self.batch_size):
                batch = order[start:start + self.batch_size]
                generated = self._batch([prompts[i] for i in batch], [thinking[i] for i in batch])
                for i, result in zip(batch, generated):
                    results[i] = result
                if done is not None:
                    done(batch, generated)
        finally:
            self.prefixes = None  # the call's shared cache is not kept past it
        return results  # type: ignore[return-value]

    def _generator(self, prompt: Sequence[int]) -> torch.Generator | None:
        if self.temperature <= 0:
            return None
        digest = hashlib.sha256(f"{self.seed}:{list(prompt)}".encode()).digest()
        return torch.Generator().manual_seed(int.from_bytes(digest[:8], "little"))

    def _decode(self, ids: Sequence[int]) -> str:
        return self.tokenizer.decode(list(ids), skip_special_tokens=False, clean_up_tokenization_spaces=False)

    @torch.inference_mode()
    def _batch(self, prompts: Sequence[Sequence[int]], thinking: Sequence[bool]) -> list[Generated]:
        model = self.model
        rows = [_Row([], think, self._generator(prompt), []) for prompt, think in zip(prompts, thinking)]
        cache, mask, next_position, logits = self._prefill(prompts)
        active = list(range(len(rows)))
        while active:
            chosen = self._choose(logits, [rows[r] for r in active])
            keep: list[int] = []
            for slot, (r, token) in enumerate(zip(active, chosen)):
                if self._step(rows[r], token):
                    keep.append(slot)
            if not keep:
                break
            keep_index = torch.tensor(keep, device=self.device)
            if len(keep) < len(active):
                cache.batch_select_indices(torch.tensor(keep))  # CPU indices serve layers on every device
                mask = mask[keep_index]
                next_position = next_position[keep_index]
            tokens = torch.tensor([[rows[active[slot]].ids[-1]] for slot in keep], device=self.device)
            mask = torch.cat([mask, torch.ones((len(keep), 1), dtype=mask.dtype, device=mask.device)], dim=1)
            logits = forward(model, tokens, mask, next_position.unsqueeze(1), cache, logits_to_keep=1).logits[:, -1, :]
            next_position = next_position + 1
            active = [active[slot] for slot in keep]
        return [Generated(self._decode([t for t in row.ids if t not in self.eos_ids]), len(row.ids), row.finish,
                          row.think_count) for row in rows]

    def _prefill(self, prompts: Sequence[Sequence[int]]) -> tuple[Any, torch.Tensor, torch.Tensor, torch.Tensor]:
        """``(cache, mask, next position per row, last logits)`` after the batch's prompts.

        Every row is ``padding | prompt`` (the padding masked, positions counting real tokens);
        with shared prefixes the prompt's first ``lengths[r]`` tokens come from a joined cache.
        """
        prefixes = self.prefixes or PrefixCache(self.model, prompts, self.device, new_cache)
        lengths = prefixes.plan(prompts)
        if lengths:
            cache = prefixes.joined(prompts, lengths)
            ids, own_mask, positions = left_padded([p[n:] for p, n in zip(prompts, lengths)], self.pad_id,
                                                   self.device)
            width = max(lengths)
            shared = torch.tensor([[0] * (width - n) + [1] * n for n in lengths], dtype=own_mask.dtype)
            mask = torch.cat([shared.to(own_mask.device), own_mask], dim=1)
            offsets = torch.tensor(lengths, dtype=torch.long, device=self.device)
            logits = forward(self.model, ids, mask, positions + offsets.unsqueeze(1), cache,
                             logits_to_keep=1).logits[:, -1, :]
            return cache, mask, offsets + own_mask.sum(-1), logits
        ids, mask, positions = left_padded(prompts, self.pad_id, self.device)
        cache = new_cache(self.model)
        logits = forward(self.model, ids, mask, positions, cache, logits_to_keep=1).logits[:, -1, :]
        return cache, mask, mask.sum(-1), logits

    def _choose(self, logits: torch.Tensor, rows: Sequence[_Row]) -> list[int]:
        if self.temperature <= 0:
            picked = logits.argmax(-1).tolist()
        else:
            probabilities = torch.softmax(logits.float() / self.temperature, dim=-1).cpu()
            picked = [int(torch.multinomial(probabilities[i], 1, generator=row.generator))
                      for i, row in enumerate(rows)]
        chosen = []
        for row, token in zip(rows, picked):
            if row.thinking and not row.closing and row.think_count >= self.thinking_tokens:
                row.closing = True
                row.forced = list(self.close_ids)
            chosen.append(row.forced.pop(0) if row.forced else token)
        return chosen

    def _step(self, row: _Row, token: int) -> bool:
        """Take ``token``; whether the row goes on."""
        row.ids.append(token)
        if token in self.eos_ids:
            row.finish = "eos"
            return False
        text = self._decode(row.ids)
        opening = text.lstrip()
        if not row.thinking and THINK_CLOSE not in text and opening.startswith(THINK_OPEN):
            row.thinking = True
        elif opening and THINK_OPEN.startswith(opening) and not row.closing:
            return True  # "<thi…": a think tag spelled in several tokens, not yet an answer
        if row.thinking:
            row.think_count += 1
            if THINK_CLOSE in text or (row.closing and not row.forced):
                row.thinking = False
            return True
        row.answer_count += 1
        answer = text.rpartition(THINK_CLOSE)[2]
        if self.stops and cut_at_stop(answer, self.stops) != answer:
            row.finish = "stop"
            return False
        if row.answer_count >= self.max_new_tokens:
            row.finish = "length"
            return False
        return True
