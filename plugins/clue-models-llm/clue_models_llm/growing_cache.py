"""A key/value cache for generation whose layers grow in place instead of by concatenation.

transformers' ``DynamicLayer`` appends each step's keys and values with ``torch.cat``: every
step copies the whole cache (18 layers x keys and values for gemma-3-270m), which on a 2-core
CPU was half of a decode step's time at 10 rows of 600 columns (``torch.profiler``, 2026-12-02).
:class:`GrowingLayer` keeps its keys and values in buffers with room for more columns and hands
out views of their filled part, so a step writes only its own column; a buffer is reallocated
(with room for half as much again) only when full. Everything else is ``DynamicLayer``'s, and
what the views hold is what ``torch.cat`` would have built.
"""

from __future__ import annotations

from typing import Any

import torch
from transformers import DynamicCache
from transformers.cache_utils import DynamicLayer

#: The least room a buffer gets past its filled columns (a generation's answer tokens, usually).
ROOM = 128


class GrowingLayer(DynamicLayer):
    """A full-attention cache layer whose ``keys``/``values`` are views of buffers with spare columns."""

    _key_buffer: torch.Tensor | None = None
    _value_buffer: torch.Tensor | None = None

    def update(self, key_states: torch.Tensor, value_states: torch.Tensor, *args: Any,
               **kwargs: Any) -> tuple[torch.Tensor, torch.Tensor]:
        if not self.is_initialized:
            self.lazy_initialization(key_states, value_states)
        filled, new = self.get_seq_length(), key_states.shape[-2]
        buffer = self._key_buffer
        if (buffer is None or filled + new > buffer.shape[-2] or buffer.shape[:-2] != key_states.shape[:-2]
                or buffer.dtype != key_states.dtype):
            self._grow(key_states, value_states, filled + new)
        assert self._key_buffer is not None and self._value_buffer is not None
        self._key_buffer[..., filled:filled + new, :] = key_states
        self._value_buffer[..., filled:filled + new, :] = value_states
        self.keys = self._key_buffer[..., :filled + new, :]
        self.values = self._value_buffer[..., :filled + new, :]
        return self.keys, self.values

    def _grow(self, key_states: torch.Tensor, value_states: torch.Tensor, needed: int) -> None:
        """New buffers with room for ``needed`` columns and more, holding the filled columns.

        The first buffers get ``ROOM`` spare columns (a prompt's cache is made once, and a long
        prompt's answer is no longer than a short one's); a full buffer grows by half, so a long
        generation reallocates a logarithmic number of times.
        """
        filled = self.get_seq_length()
        columns = needed + (ROOM if self._key_buffer is None else max(ROOM, needed // 2))
        keys = key_states.new_empty((*key_states.shape[:-2], columns, key_states.shape[-1]))
        values = value_states.new_empty((*value_states.shape[:-2], columns, value_states.shape[-1]))
        if filled:
            keys[..., :filled, :] = self.keys
            values[..., :filled, :] = self.values
        self._key_buffer, self._value_buffer = keys, values

    def batch_select_indices(self, indices: torch.Tensor) -> None:
        filled = self.get_seq_length()
        if filled and self._key_buffer is not None and self._value_buffer is not None:
            self._key_buffer = self._key_buffer[indices, ...]
            self._value_buffer = self._value_buffer[indices, ...]
            self.keys = self._key_buffer[..., :filled, :]
            self.values = self._value_buffer[..., :filled, :]
        else:
            super().batch_select_indices(indices)


def growing_cache(model: Any = None) -> Any:
    """An empty cache of :class:`GrowingLayer`\\ s, one added per layer as the model first writes it."""
    cache = DynamicCache()
    cache.layer_class_to_replicate = GrowingLayer
    return cache
