"""Forward passes with a key/value cache, across transformers versions.

transformers 5 renamed ``past_key_values`` to ``cache`` (arguments and outputs); the
names are looked up once per model class. Batches are left-padded, so every row's last
prompt token sits in the last column; positions count real tokens only.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Sequence
from typing import Any

import torch


@functools.cache
def _cache_name(model_class: type) -> str:
    parameters = inspect.signature(model_class.forward).parameters
    return "cache" if "cache" in parameters else "past_key_values"


def new_cache(model: Any) -> Any:
    from transformers import DynamicCache

    try:
        return DynamicCache(config=model.config)
    except TypeError:  # transformers 4 without a config argument
        return DynamicCache()


def forward(model: Any, input_ids: torch.Tensor, attention_mask: torch.Tensor, position_ids: torch.Tensor,
            cache: Any, logits_to_keep: int = 0) -> Any:
    """One pass that extends ``cache``; ``logits_to_keep`` > 0 computes only the last columns' logits."""
    name = _cache_name(type(model))
    kwargs: dict[str, Any] = {name: cache, "use_cache": True}
    if logits_to_keep:
        kwargs["logits_to_keep"] = logits_to_keep
    return model(input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids, **kwargs)


def left_padded(rows: Sequence[Sequence[int]], pad_id: int, device: Any) -> tuple[torch.Tensor, ...]:
    """``(ids, mask, positions)`` of rows aligned on the right (the padding on the left)."""
    width = max(len(row) for row in rows)
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for i, row in enumerate(rows):
        if row:
            ids[i, width - len(row):] = torch.tensor(row, dtype=torch.long)
            mask[i, width - len(row):] = 1
    positions = (mask.cumsum(-1) - 1).clamp(min=0)
    return ids.to(device), mask.to(device), positions.to(device)


def right_padded(rows: Sequence[Sequence[int]], pad_id: int, width: int, device: Any) -> tuple[torch.Tensor, ...]:
    """``(ids, mask)`` of rows aligned on the left, ``width`` columns."""
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for i, row in enumerate(rows):
        if row:
            ids[i, :len(row)] = torch.tensor(row, dtype=torch.long)
            mask[i, :len(row)] = 1
    return ids.to(device), mask.to(device)


def input_device(model: Any) -> torch.device:
    """Where inputs go: the embedding's device (the first GPU of a model spread with device_map)."""
    try:
        return model.get_input_embeddings().weight.device
    except AttributeError:
        return next(model.parameters()).device
