"""Masked-LM batches and loss for pre-training.

:class:`MaskingCollator` turns packed sequences into masked batches; each sequence's
masks come from a generator seeded by ``(seed, epoch, sequence index)`` (evaluation: a
fixed stream), so they are the same whatever the batch size, the number of processes or
an interruption, and change from epoch to epoch (dynamic masking).

:class:`MaskedLMLoss` wraps a transformers ``*ForMaskedLM`` model. For BERT- and
RoBERTa-style models it runs the encoder, then the prediction head on the *masked*
positions only: the head's projection onto the vocabulary is the largest matrix product
of a small model, and 85% of its rows would be thrown away by the loss. The loss is the
same mean cross-entropy as the model's own (``model(labels=…)``, the fallback for other
architectures). Accelerate prepares the wrapper, so with several processes the DDP
wrapper sits around it and gradients are synchronised as usual.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from clue_models_hf.wwm import IGNORE, mask_sequence

TRAIN_STREAM, EVAL_STREAM = 1, 2


class MaskingCollator:
    """Packed items (``ids``, ``continues``, ``index``) → ``input_ids``, ``attention_mask``, ``labels``."""

    def __init__(self, tokenizer: Any, seed: int, probability: float, stream: int = TRAIN_STREAM) -> None:
        self.seed, self.probability, self.stream = seed, probability, stream
        self.mask_id = tokenizer.mask_token_id
        self.pad_id = tokenizer.pad_token_id
        special = set(tokenizer.all_special_ids)
        self.special_ids = np.array(sorted(special), np.int64)
        self.random_ids = np.array([i for i in range(len(tokenizer)) if i not in special], np.int64)
        self.epoch = 0

    def use_epoch(self, epoch: int) -> None:
        self.epoch = epoch

    def __call__(self, items: Sequence[dict[str, Any]]) -> dict[str, torch.Tensor]:
        width = max(len(item["ids"]) for item in items)
        inputs = np.full((len(items), width), self.pad_id, np.int64)
        labels = np.full((len(items), width), IGNORE, np.int64)
        attention = np.zeros((len(items), width), np.int64)
        for row, item in enumerate(items):
            ids = item["ids"]
            rng = np.random.default_rng([self.seed, self.stream, self.epoch, int(item["index"])])
            special = np.isin(ids, self.special_ids)
            masked, target = mask_sequence(ids, item["continues"], special, rng, self.mask_id, self.random_ids,
                                           self.probability)
            inputs[row, :len(ids)], labels[row, :len(ids)], attention[row, :len(ids)] = masked, target, 1
        return {"input_ids": torch.from_numpy(inputs), "attention_mask": torch.from_numpy(attention),
                "labels": torch.from_numpy(labels),
                "index": torch.tensor([int(item["index"]) for item in items], dtype=torch.long)}


def _fast_parts(model: Any) -> tuple[Any, Any] | None:
    """(encoder, prediction head) when the model is ``head(encoder(...)[0])``, as BERT and RoBERTa are."""
    encoder = getattr(model, getattr(model, "base_model_prefix", ""), None)
    head = getattr(model, "cls", None) if type(model).__name__.startswith("Bert") else None
    if head is None and type(model).__name__.startswith(("Roberta", "XLMRoberta")):
        head = getattr(model, "lm_head", None)
    if encoder is None or head is None:
        return None
    return encoder, head


class MaskedLMLoss(nn.Module):
    """``forward(batch) -> (mean loss, per-sequence loss sums, per-sequence predicted tokens)``."""

    def __init__(self, model: Any) -> None:
        super().__init__()
        self.model = model
        self.fast = _fast_parts(model) is not None

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, labels: torch.Tensor
                ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        selected = labels != IGNORE
        if self.fast:
            encoder, head = _fast_parts(self.model)  # type: ignore[misc]
            hidden = encoder(input_ids=input_ids, attention_mask=attention_mask)[0]
            logits = head(hidden[selected]).float()
            targets = labels[selected]
        else:
            logits = self.model(input_ids=input_ids, attention_mask=attention_mask).logits.float()[selected]
            targets = labels[selected]
        losses = F.cross_entropy(logits, targets, reduction="none")
        rows = selected.nonzero()[:, 0]
        sums = torch.zeros(labels.shape[0], device=labels.device, dtype=torch.float32).index_add_(0, rows, losses)
        counts = selected.sum(dim=1)
        return losses.mean() if losses.numel() else losses.sum(), sums, counts
