"""All choices of a prompt side by side in one row after its cache: the layout and the 4D masks.

Each choice's continuation tokens (all but its last) sit one after another in its prompt's
row; positions restart after the prompt for each, and a 4D mask lets a token see its
prompt's real tokens and the earlier tokens of its own choice only, so every choice is
computed exactly as in a row of its own, without copying the cache once per choice.

A model with sliding-window layers (Gemma 2 and 3, some Mistral and Qwen configurations)
gets one mask per kind of layer, as transformers' own hybrid models take them (a dict keyed
by ``config.layer_types``' names): a sliding layer's cache keeps only the prompt's last
``window - 1`` columns, and a token sees a prompt token only when their positions are less
than the window apart, the rule transformers' own sliding mask applies.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

FULL, SLIDING = "full_attention", "sliding_attention"


@dataclass(frozen=True)
class TreeLayout:
    """Per row (prompt) and column: token, position, depth in its choice, the choice's row and target."""

    ids: torch.Tensor
    positions: torch.Tensor
    depth: torch.Tensor
    choice: torch.Tensor  # index of the choice over the whole batch; -1 for padding
    targets: torch.Tensor


def layout(continuations: Sequence[Sequence[Sequence[int]]], lengths: Sequence[int], pad_id: int) -> TreeLayout:
    """``continuations[b]``: the choices of prompt ``b``, whose real length is ``lengths[b]``."""
    width = max(1, max(sum(len(c) - 1 for c in choices) for choices in continuations))
    shape = (len(continuations), width)
    ids = torch.full(shape, pad_id, dtype=torch.long)
    positions = torch.zeros(shape, dtype=torch.long)
    depth = torch.zeros(shape, dtype=torch.long)
    choice = torch.full(shape, -1, dtype=torch.long)
    targets = torch.full(shape, pad_id, dtype=torch.long)
    row = 0
    for b, choices in enumerate(continuations):
        at = 0
        for continuation in choices:
            n = len(continuation) - 1
            if n > 0:
                ids[b, at:at + n] = torch.tensor(continuation[:-1])
                depth[b, at:at + n] = torch.arange(n)
                positions[b, at:at + n] = lengths[b] + torch.arange(n)
                choice[b, at:at + n] = row
                targets[b, at:at + n] = torch.tensor(continuation[1:])
            at += max(n, 0)
            row += 1
    return TreeLayout(ids, positions, depth, choice, targets)


def layer_kinds(cache: Any) -> list[tuple[str, int]] | None:
    """``(kind, window)`` of every cache layer, or ``None`` for a layer that is neither full nor sliding."""
    kinds = []
    for layer in getattr(cache, "layers", None) or []:
        name = type(layer).__name__
        if name == "DynamicLayer":
            kinds.append((FULL, 0))
        elif name == "DynamicSlidingWindowLayer":
            kinds.append((SLIDING, int(layer.sliding_window)))
        else:
            return None
    return kinds or None


def _additive(allowed: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    return torch.zeros(allowed.shape, dtype=dtype).masked_fill(~allowed, torch.finfo(dtype).min).unsqueeze(1)


def _own(tree: TreeLayout, window: int) -> torch.Tensor:
    """Tree token to tree token: the same choice, not later, and (a sliding layer) within the window."""
    real = tree.choice >= 0
    same = (tree.choice.unsqueeze(2) == tree.choice.unsqueeze(1)) & real.unsqueeze(1)
    before = tree.depth.unsqueeze(2) >= tree.depth.unsqueeze(1)
    allowed = same & before
    if window:
        allowed &= (tree.depth.unsqueeze(2) - tree.depth.unsqueeze(1)) < window
    width = tree.ids.shape[1]
    return allowed | torch.eye(width, dtype=torch.bool).unsqueeze(0)  # padding sees itself (no NaN)


def masks(tree: TreeLayout, prompt_mask: torch.Tensor, cache: Any, config: Any, dtype: torch.dtype) -> Any:
    """The attention mask(s) of the tree pass, or ``None`` where this model's layers are not known kinds."""
    kinds = layer_kinds(cache)
    if kinds is None:
        return None
    prompt = prompt_mask.bool().cpu()
    width, prompt_width = tree.ids.shape[1], prompt.shape[1]
    full = _additive(torch.cat([prompt.unsqueeze(1).expand(-1, width, -1), _own(tree, 0)], dim=2), dtype)
    if all(kind == FULL for kind, _ in kinds):
        return full
    windows = {window for kind, window in kinds if kind == SLIDING}
    types = set(getattr(config, "layer_types", None) or ())
    if len(windows) != 1 or not types <= {FULL, SLIDING}:
        return None
    window = windows.pop()
    held = min(prompt_width, window - 1)  # the prompt columns a sliding layer's cache keeps (its last ones)
    columns = torch.arange(prompt_width - held, prompt_width)
    near = columns.view(1, 1, -1) > prompt_width + tree.depth.unsqueeze(2) - window
    seen = prompt[:, prompt_width - held:].unsqueeze(1) & near
    sliding = _additive(torch.cat([seen, _own(tree, window)], dim=2), dtype)
    return {FULL: full, SLIDING: sliding}
