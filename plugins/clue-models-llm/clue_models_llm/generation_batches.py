"""Shared prefixes of generation batches: computed once, their caches joined for the batch's rows.

The prompts of one generation call usually begin alike (the instruction, the few-shot
demos, a chat template's header), and questions about one passage share the passage too.
:func:`batch_order` puts prompts that share more than the call's common prefix next to each
other (longest groups first), so they fall into the same batch. :class:`PrefixCache`
computes the tokens every prompt of the call begins with once, in one row (the *root*); in
a batch, each group of prompts sharing more continues a copy of the root with its own
common tokens, once. The batch's pass then computes the same number of tokens for every row
(its widest own part; a row whose prefix is longer recomputes the prefix's end instead of
padding), so the joined cache holds each row's prefix right-aligned (``padding | prefix``)
and every row is a plain left-padded one: no padding between a row's tokens, column and
position distances equal. That is what a sliding-window layer (Gemma 2 and 3, some Mistral
and Qwen configurations) needs, as its mask measures the window in columns; and, as a
prefix may be cut anywhere, the caches keep every column of every layer
(:func:`~clue_models_llm.growing_cache.growing_cache`; a sliding layer's window is applied by
the mask), so prompts longer than the window share their prefixes too. A model whose cache
layers are of another kind, or a cache that cannot be built row by row, shares nothing.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Callable, Sequence
from typing import Any

import torch

from clue_models_llm.growing_cache import growing_cache
from clue_models_llm.tree_masks import layer_kinds

#: Shorter common prefixes are not worth a pass of their own.
MIN_SHARED_TOKENS = 8
#: What one more pass costs, in tokens of a pass: reading every weight once (a decode step of
#: gemma-3-270m on 2 cores takes about as long as a prompt pass of 50 tokens).
PASS_TOKENS = 64


def _common(a: Sequence[int], b: Sequence[int]) -> int:
    n, limit = 0, min(len(a), len(b))
    while n < limit and a[n] == b[n]:
        n += 1
    return n


def common_length(prompts: Sequence[Sequence[int]]) -> int:
    """How many leading tokens every prompt shares, leaving each at least its last token of its own."""
    if not prompts:
        return 0
    first = prompts[0]
    shared = min(len(p) for p in prompts) - 1
    for prompt in prompts[1:]:
        shared = min(shared, _common(first, prompt))
    return max(shared, 0)


def groups(prompts: Sequence[Sequence[int]], beyond: int) -> list[list[int]]:
    """Indices of prompts sharing at least ``beyond + MIN_SHARED_TOKENS`` leading tokens, each group in
    prompt order (neighbours in sorted order: prompts sharing a prefix sort next to each other)."""
    if not prompts:
        return []
    order = sorted(range(len(prompts)), key=lambda i: list(prompts[i]))
    found = [[order[0]]]
    for previous, index in itertools.pairwise(order):
        if _common(prompts[previous], prompts[index]) >= beyond + MIN_SHARED_TOKENS:
            found[-1].append(index)
        else:
            found.append([index])
    return [sorted(group) for group in found]


def batch_order(prompts: Sequence[Sequence[int]]) -> list[int]:
    """The order prompts are generated in: groups sharing a prefix together, longest groups first, a
    group's prompts in token order (a group whose prompts all begin alike, several passages of one
    corpus, keeps each passage's questions next to each other); without shared prefixes by length."""
    found = groups(prompts, common_length(prompts))
    group_of = {index: g for g, group in enumerate(found) for index in group}
    longest = [max(len(prompts[i]) for i in group) for group in found]
    rank = {index: r for r, index in enumerate(sorted(range(len(prompts)), key=lambda i: list(prompts[i])))}
    return sorted(range(len(prompts)), key=lambda i: (-longest[group_of[i]], min(found[group_of[i]]),
                                                      rank[i] if len(found[group_of[i]]) > 1 else 0, i))


class PrefixCache:
    """The shared prefixes of one generation call (``prompts``: all of its prompts)."""

    def __init__(self, model: Any, prompts: Sequence[Sequence[int]], device: Any,
                 new_cache: Callable[[Any], Any], extend: Callable[..., None]) -> None:
        self.model = model
        #: ``extend(ids, mask, positions, cache)``: a pass that only extends a cache (``Head.extend``).
        self._pass = extend
        self.device = device
        probe = new_cache(model)
        kinds = layer_kinds(probe)
        self.usable = kinds is not None and hasattr(probe, "update")
        #: Every layer keeps every column: a sliding layer's own cache keeps only its window's last
        #: columns, and a prefix cut short needs them all (the window is applied by the mask); a
        #: step writes its column into room kept for it (:mod:`clue_models_llm.growing_cache`).
        self.new_cache = growing_cache if self.usable else new_cache
        self.root_ids = list(prompts[0][:common_length(prompts)]) if prompts else []
        self._root: Any = None
        self._last: tuple[tuple[int, ...], Any] | None = None
        self._sources: list[int] = []
        #: Tokens computed by prefix passes (the root once, each group's own common tokens).
        self.computed_tokens = 0

    def plan(self, prompts: Sequence[Sequence[int]]) -> list[int] | None:
        """Per row of one batch: how many of its leading tokens come from a shared cache; ``None``: none do.

        Every row then computes the same number of its own tokens (the batch's widest own part;
        a row sharing more recomputes the end of its prefix, in columns that would otherwise be
        padding), so each row is ``padding | prefix | own tokens``, a plain left-padded row. A
        row starts from the longest prefix it shares with another row of the batch (a passage
        several questions ask about, not merely the opening words every passage of a corpus
        begins with), a row sharing no more than the root from the root; the rows whose own
        parts are the widest start instead from their own prompt computed in a row of its own
        (all but its last token; continuing the last batch's passage where it begins with it)
        where that costs the batch less (their own tokens would widen every row).
        """
        if not self.usable or not prompts:
            return None
        root = self._root_length()
        order = sorted(range(len(prompts)), key=lambda i: list(prompts[i]))
        best = [0] * len(prompts)
        for a, b in itertools.pairwise(order):  # the longest shared prefix of a row is with a neighbour
            shared = common_length([prompts[a], prompts[b]])
            best[a], best[b] = max(best[a], shared), max(best[b], shared)
        sources = [n if n >= root + MIN_SHARED_TOKENS else root for n in best]
        own = [len(p) - n for p, n in zip(prompts, sources)]
        # the rows whose own parts are wider than a bound computed alone, for the cheapest bound
        options = [[len(p) - 1 if w > bound else n for p, n, w in zip(prompts, sources, own)]
                   for bound in sorted(set(own))]
        self._sources = min(options, key=lambda option: self._cost(prompts, option, root))
        width = max(len(p) - n for p, n in zip(prompts, self._sources))
        lengths = [max(len(p) - width, 0) for p in prompts]
        return lengths if any(lengths) else None

    def _root_length(self) -> int:
        return len(self.root_ids) if len(self.root_ids) >= MIN_SHARED_TOKENS else 0

    @staticmethod
    def _distinct(prompts: Sequence[Sequence[int]], sources: Sequence[int], root: int) -> list[tuple[int, ...]]:
        """The prefixes a batch computes: each row's source past the root, less those a longer one begins with."""
        wanted = sorted({tuple(p[:n]) for p, n in zip(prompts, sources) if n > root}, key=len, reverse=True)
        kept: list[tuple[int, ...]] = []
        for prefix in wanted:
            if not any(longer[:len(prefix)] == prefix for longer in kept):
                kept.append(prefix)
        return kept

    @classmethod
    def _cost(cls, prompts: Sequence[Sequence[int]], sources: Sequence[int], root: int) -> int:
        """Tokens computed for a batch: its distinct prefixes past the root, then every row's own tokens
        (padding included), each pass counted ``PASS_TOKENS`` more."""
        prefixes = cls._distinct(prompts, sources, root)
        own = len(prompts) * max(len(p) - n for p, n in zip(prompts, sources))
        return sum(len(p) - root + PASS_TOKENS for p in prefixes) + own

    def joined(self, prompts: Sequence[Sequence[int]], lengths: Sequence[int]) -> Any:
        """A new cache of ``len(prompts)`` rows: row r holds zeros, then ``prompts[r][:lengths[r]]``."""
        width = max(lengths)
        root = self._root_length()
        sources = self._sources if len(self._sources) == len(prompts) else list(lengths)
        parts = {prefix: self._prefix(prefix) for prefix in self._distinct(prompts, sources, root)}
        if root and any(0 < n <= root for n in lengths):
            parts[tuple(self.root_ids)] = self._prefix(self.root_ids)
        rows = []
        for prompt, n in zip(prompts, lengths):
            head = tuple(prompt[:n])
            rows.append((next((part for key, part in parts.items() if key[:n] == head), None) if n else None, n))
        sample = next(part for part, _n in rows if part is not None)
        cache = self.new_cache(self.model)
        for layer in range(len(sample.layers)):
            keys, values = [], []
            for part, n in rows:
                if n:
                    k, v = part.layers[layer].keys, part.layers[layer].values
                    keys.append(torch.nn.functional.pad(k[:, :, :n], (0, 0, width - n, 0)))
                    values.append(torch.nn.functional.pad(v[:, :, :n], (0, 0, width - n, 0)))
                else:
                    k, v = sample.layers[layer].keys, sample.layers[layer].values
                    keys.append(k.new_zeros((*k.shape[:2], width, k.shape[3])))
                    values.append(v.new_zeros((*v.shape[:2], width, v.shape[3])))
            cache.update(torch.cat(keys), torch.cat(values), layer)
        return cache

    def _prefix(self, prefix: Sequence[int]) -> Any:
        """A one-row cache holding ``prefix`` (the root's pass reused; the last one kept for the next batch)."""
        key = tuple(prefix)
        if self._last is not None and self._last[0] == key:
            return self._last[1]
        root = len(self.root_ids)
        if root >= MIN_SHARED_TOKENS and list(prefix[:root]) == self.root_ids:
            if self._root is None:
                self._root = self.new_cache(self.model)
                self._extend(self._root, self.root_ids, 0)
            if len(prefix) == root:
                return self._root
            cache, start = copy.deepcopy(self._root), root
            if self._last is not None and len(self._last[0]) > root and key[:len(self._last[0])] == self._last[0]:
                cache, start = copy.deepcopy(self._last[1]), len(self._last[0])  # a passage the last batch computed
        else:
            cache, start = self.new_cache(self.model), 0
        self._extend(cache, prefix, start)
        self._last = (key, cache)
        return cache

    def _extend(self, cache: Any, ids: Sequence[int], start: int) -> None:
        """Continue a one-row ``cache`` holding ``ids[:start]`` with ``ids[start:]``."""
        new = torch.tensor([list(ids[start:])], dtype=torch.long, device=self.device)
        mask = torch.ones((1, len(ids)), dtype=torch.long, device=self.device)
        positions = torch.arange(start, len(ids), dtype=torch.long, device=self.device).unsqueeze(0)
        self._pass(new, mask, positions, cache)
        self.computed_tokens += len(ids) - start
