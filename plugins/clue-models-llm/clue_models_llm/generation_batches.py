"""Shared prefixes of generation batches: computed once, their cache repeated for every row.

The prompts of one generation call usually begin alike (the instruction, the few-shot
demos, a chat template's header). :class:`PrefixCache` computes the tokens every prompt of
the call begins with once, in one row (the *root*), and for each batch continues a copy of
it with the tokens that batch's prompts alone share, then repeats that cache for the
batch's rows. The rows' own tokens follow left-padded: ``prefix | padding | suffix``, the
padding masked in the 2D attention mask and positions counting real tokens only, so each
row's attention sees exactly the keys its unpadded prompt would, at the same positions.

A sliding-window layer (Gemma 2 and 3, some Mistral and Qwen configurations) measures its
window in cache columns, so padding inside a row would move the window: a batch shares its
prefix only while its longest prompt fits in the window's cache (``window - 1`` columns),
and right after the prompts are computed each row's padding is moved in front of its
prefix (:meth:`PrefixCache.close_gaps`), making the rows plain left-padded ones, whose
column and position distances agree for the rest of the generation. A model whose cache
layers are of another kind, or a cache that cannot repeat its rows, shares nothing.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any

import torch

from clue_models_llm.runtime import forward
from clue_models_llm.tree_masks import SLIDING, layer_kinds

#: Shorter common prefixes are not worth a pass of their own.
MIN_SHARED_TOKENS = 8


def common_length(prompts: Sequence[Sequence[int]]) -> int:
    """How many leading tokens every prompt shares, leaving each at least its last token of its own."""
    if not prompts:
        return 0
    first, limit = prompts[0], min(len(p) for p in prompts) - 1
    n = 0
    while n < limit and all(p[n] == first[n] for p in prompts):
        n += 1
    return max(n, 0)


class PrefixCache:
    """The shared prefixes of one generation call (``prompts``: all of its prompts)."""

    def __init__(self, model: Any, prompts: Sequence[Sequence[int]], device: Any,
                 new_cache: Callable[[Any], Any]) -> None:
        self.model = model
        self.device = device
        self.new_cache = new_cache
        probe = new_cache(model)
        kinds = layer_kinds(probe)
        self.usable = kinds is not None and hasattr(probe, "batch_repeat_interleave")
        windows = [window for kind, window in kinds or () if kind == SLIDING]
        self.window = min(windows) if windows else 0
        self.root_ids = list(prompts[0][:common_length(prompts)]) if prompts else []
        self._root: Any = None
        #: Tokens computed by prefix passes (the root once, each batch's own extension).
        self.computed_tokens = 0

    def shared_length(self, prompts: Sequence[Sequence[int]]) -> int:
        """The prefix length ``prompts`` (one batch) share and may compute once; 0: none."""
        if not self.usable:
            return 0
        shared = common_length(prompts)
        if shared < MIN_SHARED_TOKENS:
            return 0
        if self.window and max(len(p) for p in prompts) > self.window - 1:
            return 0  # the padding would sit inside a sliding layer's window
        return shared

    def expanded(self, prefix: Sequence[int], rows: int) -> Any:
        """A new cache holding ``prefix``, repeated for ``rows`` rows (the root's pass reused)."""
        root = len(self.root_ids)
        if root >= MIN_SHARED_TOKENS and list(prefix[:root]) == self.root_ids:
            if self._root is None:
                self._root = self.new_cache(self.model)
                self._extend(self._root, self.root_ids, 0)
            cache, start = copy.deepcopy(self._root), root
        else:
            cache, start = self.new_cache(self.model), 0
        if start < len(prefix):
            self._extend(cache, prefix, start)
        cache.batch_repeat_interleave(rows)
        return cache

    def _extend(self, cache: Any, ids: Sequence[int], start: int) -> None:
        """Continue a one-row ``cache`` holding ``ids[:start]`` with ``ids[start:]``."""
        new = torch.tensor([list(ids[start:])], dtype=torch.long, device=self.device)
        mask = torch.ones((1, len(ids)), dtype=torch.long, device=self.device)
        positions = torch.arange(start, len(ids), dtype=torch.long, device=self.device).unsqueeze(0)
        forward(self.model, new, mask, positions, cache, logits_to_keep=1)
        self.computed_tokens += len(ids) - start

    def close_gaps(self, cache: Any, mask: torch.Tensor, shared: int) -> torch.Tensor:
        """With sliding layers: each row's padding moved before its prefix (cache and mask); the new mask.

        Attention does not depend on the order of the keys it sees, only on which it sees, so
        moving columns changes no result; afterwards every row is a left-padded one.
        """
        if not self.window:
            return mask
        width = mask.shape[1]
        rows = []
        for row in mask.tolist():
            gap = width - shared - sum(row[shared:])
            rows.append([*range(shared, shared + gap), *range(shared), *range(shared + gap, width)])
        order = torch.tensor(rows, dtype=torch.long)
        for layer in cache.layers:
            if layer.keys.shape[-2] != width:
                raise RuntimeError(f"a cache layer holds {layer.keys.shape[-2]} columns, the mask {width}")
            index = order.to(layer.keys.device)[:, None, :, None]
            layer.keys = layer.keys.gather(2, index.expand_as(layer.keys))
            layer.values = layer.values.gather(2, index.expand_as(layer.values))
        return mask.gather(1, order.to(mask.device))
