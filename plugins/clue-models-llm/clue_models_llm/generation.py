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

from clue_models_llm.chunked_head import Head
from clue_models_llm.extract import THINK_CLOSE, THINK_OPEN, cut_at_stop
from clue_models_llm.generation_batches import PrefixCache, batch_order
from clue_models_llm.runtime import input_device, left_padded, new_cache

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


@dataclass
class _Batch:
    """The rows being generated (``members``: their prompts' indices), their cache, attention mask
    (one column per cache column), next positions and last logits."""

    members: list[int]
    cache: Any
    mask: torch.Tensor
    next_position: torch.Tensor
    logits: torch.Tensor


def _columns(batch: _Batch) -> int | None:
    """The cache's width where every layer keeps one column per mask column (rows can join it), or ``None``."""
    layers = getattr(batch.cache, "layers", None)
    width = batch.mask.shape[1]
    if not layers or any(getattr(layer, "keys", None) is None or layer.keys.dim() != 4
                         or layer.keys.shape[2] != width for layer in layers):
        return None
    return width


def _merged(old: _Batch, new: _Batch, empty: Any) -> _Batch:
    """Both batches' rows in one, ``empty`` (a fresh cache) holding them: the narrower side padded on
    the left, in masked columns, so every row stays a plain left-padded one (see the module docstring)."""
    width = max(old.mask.shape[1], new.mask.shape[1])

    def padded(tensor: torch.Tensor, columns: int) -> torch.Tensor:
        if tensor.dim() == 2:
            return torch.nn.functional.pad(tensor, (width - columns, 0))
        return torch.nn.functional.pad(tensor, (0, 0, width - columns, 0))

    wide_old, wide_new = old.mask.shape[1], new.mask.shape[1]
    for layer, (a, b) in enumerate(zip(old.cache.layers, new.cache.layers)):
        empty.update(torch.cat([padded(a.keys, wide_old), padded(b.keys, wide_new)]),
                     torch.cat([padded(a.values, wide_old), padded(b.values, wide_new)]), layer)
    return _Batch(old.members + new.members, empty,
                  torch.cat([padded(old.mask, wide_old), padded(new.mask, wide_new)]),
                  torch.cat([old.next_position, new.next_position]), torch.cat([old.logits, new.logits]))


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
        #: The decoder and the model's own head apart: prefix passes skip the head, and a step's
        #: few rows go through :meth:`Head.few` (the model's forward where they disagree).
        self.head = Head(model)

    def generate(self, prompts: Sequence[Sequence[int]], thinking: Sequence[bool] | None = None,
                 done: Callable[[list[int], list[Generated]], None] | None = None) -> list[Generated]:
        """One generation per prompt, in prompt order; ``thinking[i]``: prompt i ends inside a think block.

        ``done(indices, generated)`` hears of rows as they finish (a step's finished rows at once).
        """
        thinking = list(thinking) if thinking is not None else [False] * len(prompts)
        order = batch_order(prompts)
        results: list[Generated | None] = [None] * len(prompts)
        self.prefixes = PrefixCache(self.model, prompts, self.device, new_cache, self.head.extend)
        try:
            with torch.inference_mode():
                self._generate(prompts, thinking, order, results, done)
        finally:
            self.prefixes = None  # the call's shared cache is not kept past it
        return results  # type: ignore[return-value]

    def _generate(self, prompts: Sequence[Sequence[int]], thinking: Sequence[bool], order: Sequence[int],
                  results: list[Generated | None], done: Callable[[list[int], list[Generated]], None] | None) -> None:
        """Steps over a batch that new prompts join as its rows finish (see :meth:`_refills`)."""
        rows: dict[int, _Row] = {}
        batch: _Batch | None = None
        taken = 0
        while taken < len(order) or batch is not None:
            if taken < len(order) and (batch is None or self._refills(batch)):
                joining = list(order[taken:taken + self.batch_size - (len(batch.members) if batch else 0)])
                taken += len(joining)
                for i in joining:
                    rows[i] = _Row([], thinking[i], self._generator(prompts[i]), [])
                joined = self._prefill([prompts[i] for i in joining], joining)
                batch = joined if batch is None else _merged(batch, joined, self.prefixes.new_cache(self.model))
            finished = self._advance(batch, rows)
            if finished:
                generated = [self._result(rows.pop(i)) for i in finished]
                for i, result in zip(finished, generated):
                    results[i] = result
                if done is not None:
                    done(finished, generated)
            if not batch.members:
                batch = None

    def _refills(self, batch: _Batch) -> bool:
        """Whether waiting prompts join ``batch`` now: once half of its rows have finished, so a step
        computes a nearly full batch (a step costs about as much for 16 rows as for 4: the weights are
        read once either way), and only where its cache's columns can be padded like a prompt's."""
        return (len(batch.members) <= self.batch_size // 2 and self.prefixes is not None and self.prefixes.usable
                and _columns(batch) is not None)

    def _result(self, row: _Row) -> Generated:
        return Generated(self._decode([t for t in row.ids if t not in self.eos_ids]), len(row.ids), row.finish,
                         row.think_count)

    def _generator(self, prompt: Sequence[int]) -> torch.Generator | None:
        if self.temperature <= 0:
            return None
        digest = hashlib.sha256(f"{self.seed}:{list(prompt)}".encode()).digest()
        return torch.Generator().manual_seed(int.from_bytes(digest[:8], "little"))

    def _decode(self, ids: Sequence[int]) -> str:
        return self.tokenizer.decode(list(ids), skip_special_tokens=False, clean_up_tokenization_spaces=False)

    def _advance(self, batch: _Batch, rows: dict[int, _Row]) -> list[int]:
        """One token for every row of ``batch`` (which drops its finished rows); the rows that finished."""
        chosen = self._choose(batch.logits, [rows[i] for i in batch.members])
        keep = [slot for slot, (i, token) in enumerate(zip(batch.members, chosen)) if self._step(rows[i], token)]
        kept = set(keep)
        finished = [i for slot, i in enumerate(batch.members) if slot not in kept]
        if not keep:
            batch.members = []
            return finished
        if len(keep) < len(batch.members):
            keep_index = torch.tensor(keep, device=self.device)
            batch.cache.batch_select_indices(torch.tensor(keep))  # CPU indices serve layers on every device
            batch.mask = batch.mask[keep_index]
            batch.next_position = batch.next_position[keep_index]
            batch.members = [batch.members[slot] for slot in keep]
        tokens = torch.tensor([[rows[i].ids[-1]] for i in batch.members], device=self.device)
        batch.mask = torch.cat([batch.mask, torch.ones((len(keep), 1), dtype=batch.mask.dtype,
                                                       device=batch.mask.device)], dim=1)
        batch.logits = self.head.last(tokens, batch.mask, batch.next_position.unsqueeze(1), batch.cache)
        batch.next_position = batch.next_position + 1
        return finished

    def _prefill(self, prompts: Sequence[Sequence[int]], members: list[int]) -> _Batch:
        """The rows of ``prompts`` (``members``: their indices) after their prompts: cache, mask, next
        position per row, last logits.

        Every row is ``padding | prompt`` (the padding masked, positions counting real tokens);
        with shared prefixes the prompt's first ``lengths[r]`` tokens come from a joined cache.
        """
        prefixes = self.prefixes or PrefixCache(self.model, prompts, self.device, new_cache, self.head.extend)
        lengths = prefixes.plan(prompts)
        if lengths:
            cache = prefixes.joined(prompts, lengths)
            ids, own_mask, positions = left_padded([p[n:] for p, n in zip(prompts, lengths)], self.pad_id,
                                                   self.device)
            width = max(lengths)
            shared = torch.tensor([[0] * (width - n) + [1] * n for n in lengths], dtype=own_mask.dtype)
            mask = torch.cat([shared.to(own_mask.device), own_mask], dim=1)
            offsets = torch.tensor(lengths, dtype=torch.long, device=self.device)
            logits = self.head.last(ids, mask, positions + offsets.unsqueeze(1), cache)
            return _Batch(members, cache, mask, offsets + own_mask.sum(-1), logits)
        ids, mask, positions = left_padded(prompts, self.pad_id, self.device)
        cache = prefixes.new_cache(self.model)  # every column kept (sliding layers too): rows may join it
        logits = self.head.last(ids, mask, positions, cache)
        return _Batch(members, cache, mask, mask.sum(-1), logits)

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
