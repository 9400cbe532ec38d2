"""Shared prefixes of generation batches: computed once, their caches joined for the batch's rows.

The prompts of one generation call usually begin alike (the instruction, the few-shot
demos, a chat template's header), and questions about one passage share the passage too.
:func:`batch_order` puts prompts that share more than the call's common prefix next to each
other (longest groups first), so they fall into the same batch. :class:`PrefixCache`
computes the tokens every prompt of the call begins with once, in one row (the *root*); in
a batch, each group of prompts sharing more continues a copy of the root with its own
common tokens, once; the rows' caches are joined (``prefix | padding``) and the rows' own
tokens follow, left-padded: ``prefix | padding | suffix``, every padding column masked in
the 2D attention mask and positions counting real tokens only, so each row's attention sees
exactly the keys its unpadded prompt would, at the same positions.

A sliding-window layer (Gemma 2 and 3, some Mistral and Qwen configurations) measures its
window in cache columns, so padding inside a row would move the window: a batch shares
prefixes only while its widest row fits in the window's cache (``window - 1`` columns), and
right after the prompts are computed each row's padding is moved in front of its tokens
(:meth:`PrefixCache.close_gaps`), making the rows plain left-padded ones, whose column and
position distances agree for the rest of the generation. A model whose cache layers are of
another kind, or a cache that cannot be built row by row, shares nothing.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Callable, Sequence
from typing import Any

import torch

from clue_models_llm.runtime import forward
from clue_models_llm.tree_masks import SLIDING, layer_kinds

#: Shorter common prefixes are not worth a pass of their own.
MIN_SHARED_TOKENS = 8


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
    """The order prompts are generated in: groups sharing a prefix together, longest groups first, then
    longest prompts first (without shared prefixes: by length, as before)."""
    found = groups(prompts, common_length(prompts))
    group_of = {index: g for g, group in enumerate(found) for index in group}
    longest = [max(len(prompts[i]) for i in group) for group in found]
    return sorted(range(len(prompts)), key=lambda i: (-longest[group_of[i]], min(found[group_of[i]]),
                                                      -len(prompts[i]), i))


class PrefixCache:
    """The shared prefixes of one generation call (``prompts``: all of its prompts)."""

    def __init__(self, model: Any, prompts: Sequence[Sequence[int]], device: Any,
                 new_cache: Callable[[Any], Any]) -> None:
        self.model = model
        self.device = device
        self.new_cache = new_cache
        probe = new_cache(model)
        kinds = layer_kinds(probe)
        self.usable = kinds is not None and hasattr(probe, "update")
        windows = [window for kind, window in kinds or () if kind == SLIDING]
        self.window = min(windows) if windows else 0
        self.root_ids = list(prompts[0][:common_length(prompts)]) if prompts else []
        self._root: Any = None
        self._last: tuple[tuple[int, ...], Any] | None = None
        #: Tokens computed by prefix passes (the root once, each group's own common tokens).
        self.computed_tokens = 0

    def plan(self, prompts: Sequence[Sequence[int]]) -> list[int] | None:
        """Per row of one batch: how many of its leading tokens come from a shared cache; ``None``: none do.

        A row of a group sharing more than the root starts from the group's common tokens, a
        row of its own from the root. Where that is too wide for a sliding window, a row of
        its own is computed in a row of its own (all but its last token), which keeps the
        batch as narrow as its longest prompt.
        """
        if not self.usable or not prompts:
            return None
        root = len(self.root_ids) if len(self.root_ids) >= MIN_SHARED_TOKENS else 0
        lengths = [0] * len(prompts)
        alone = []
        for group in groups(prompts, root):
            if len(group) > 1:
                shared = common_length([prompts[i] for i in group])
                lengths = [shared if i in group else n for i, n in enumerate(lengths)]
            else:
                alone.append(group[0])
                lengths[group[0]] = root
        for _attempt in range(2):
            if not any(lengths):
                return None
            width = max(lengths) + max(len(p) - n for p, n in zip(prompts, lengths))
            if not self.window or width <= self.window - 1:
                return lengths
            for i in alone:  # narrower: each row of its own computed in full ahead of the batch
                lengths[i] = len(prompts[i]) - 1
        return None  # the padding would sit inside a sliding layer's window

    def joined(self, prompts: Sequence[Sequence[int]], lengths: Sequence[int]) -> Any:
        """A new cache of ``len(prompts)`` rows: row r holds ``prompts[r][:lengths[r]]``, then zeros."""
        width = max(lengths)
        parts: dict[tuple[int, ...], Any] = {}
        for prompt, n in zip(prompts, lengths):
            if n and tuple(prompt[:n]) not in parts:
                parts[tuple(prompt[:n])] = self._prefix(prompt[:n])
        cache = self.new_cache(self.model)
        for layer in range(len(cache.layers)):
            keys, values = [], []
            for prompt, n in zip(prompts, lengths):
                part = parts[tuple(prompt[:n])] if n else next(iter(parts.values()))
                k, v = part.layers[layer].keys, part.layers[layer].values
                if n:
                    keys.append(torch.nn.functional.pad(k, (0, 0, 0, width - n)))
                    values.append(torch.nn.functional.pad(v, (0, 0, 0, width - n)))
                else:
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
        forward(self.model, new, mask, positions, cache, logits_to_keep=1)
        self.computed_tokens += len(ids) - start

    def close_gaps(self, cache: Any, mask: torch.Tensor) -> torch.Tensor:
        """With sliding layers: each row's padding moved before its tokens (cache and mask); the new mask.

        Attention does not depend on the order of the keys it sees, only on which it sees, so
        moving columns changes no result; afterwards every row is a left-padded one.
        """
        if not self.window:
            return mask
        width = mask.shape[1]
        order = torch.sort(mask.cpu(), dim=1, stable=True).indices  # padding (0) first, tokens in order
        for layer in cache.layers:
            if layer.keys.shape[-2] != width:
                raise RuntimeError(f"a cache layer holds {layer.keys.shape[-2]} columns, the mask {width}")
            index = order.to(layer.keys.device)[:, None, :, None]
            layer.keys = layer.keys.gather(2, index.expand_as(layer.keys))
            layer.values = layer.values.gather(2, index.expand_as(layer.values))
        return mask.gather(1, order.to(mask.device))
