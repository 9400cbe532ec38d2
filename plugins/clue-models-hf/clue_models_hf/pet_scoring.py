"""PET scoring: a masked-LM encoder scores every label's verbaliser at the mask positions.

A label's score is the mean log-probability (over the whole vocabulary) of its
verbaliser's tokens at their mask positions, in the input variant with exactly that many
masks (:mod:`clue_models_hf.pet`); training minimises the cross-entropy of the softmax over
the labels' scores, the PET objective without its auxiliary MLM loss.

:class:`PetModel` wraps the ``*ForMaskedLM`` model so the training loop, Accelerate (DDP
included: gradients are synchronised by the wrapper's own forward) and checkpoints see one
module whose forward returns the label scores. The encoder runs over every position, but
the MLM head only over the mask positions: a (rows, tokens, vocabulary) logit block is
never built (BERT's 21,128-word vocabulary at 128 tokens would be 11 MB per row).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from clue_core.plugin import ClueError
from clue_models_hf.batching import _attention, _pad
from clue_models_hf.pet import mask_counts

#: Architectures whose checkpoints carry a masked-LM head (ELECTRA's *ForPreTraining is a discriminator).
MLM_ARCHITECTURES = ("ForMaskedLM", "ForPreTraining", "LMHeadModel", "WithLMHead")


class PetModel(nn.Module):
    """``forward(input_ids, attention_mask, mask_start) -> (examples, labels)`` label scores.

    Rows come ``variants`` per example (example ``b``'s variant ``v`` is row ``b * V + v``);
    ``mask_start`` is each row's first mask position.
    """

    def __init__(self, mlm: Any, tokens: Sequence[Sequence[int]]) -> None:
        super().__init__()
        self.mlm = mlm
        counts = mask_counts(tokens)
        self.variants = len(counts)
        self.width = max(counts)
        grid = torch.zeros((len(tokens), self.width), dtype=torch.long)
        valid = torch.zeros((len(tokens), self.width), dtype=torch.bool)
        variant = torch.zeros(len(tokens), dtype=torch.long)
        for label, ids in enumerate(tokens):
            grid[label, :len(ids)] = torch.as_tensor(list(ids))
            valid[label, :len(ids)] = True
            variant[label] = counts.index(len(ids))
        self.register_buffer("grid", grid, persistent=False)
        self.register_buffer("valid", valid, persistent=False)
        self.register_buffer("variant", variant, persistent=False)
        prefix = getattr(mlm, "base_model_prefix", "")
        #: the MLM head: every child module but the encoder, applied in order (ELECTRA has two)
        self.head_modules = [name for name, _ in mlm.named_children() if name != prefix]
        if not prefix or not self.head_modules:
            raise ClueError(f"method=pet: {type(mlm).__name__} has no separate masked-LM head to score with")

    def head(self, hidden: torch.Tensor) -> torch.Tensor:
        for name in self.head_modules:
            hidden = getattr(self.mlm, name)(hidden)
        return hidden

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, mask_start: torch.Tensor,
                token_type_ids: torch.Tensor | None = None) -> torch.Tensor:
        extra = {"token_type_ids": token_type_ids} if token_type_ids is not None else {}
        hidden = self.mlm.base_model(input_ids=input_ids, attention_mask=attention_mask, **extra)[0]
        rows, length, size = hidden.shape
        positions = (mask_start[:, None] + torch.arange(self.width, device=hidden.device)).clamp(max=length - 1)
        at_masks = hidden.gather(1, positions[..., None].expand(rows, self.width, size))
        log_probs = F.log_softmax(self.head(at_masks).float(), dim=-1)  # (rows, width, vocabulary)
        vocabulary = log_probs.shape[-1]
        examples = rows // self.variants
        flat = log_probs.reshape(examples, self.variants * self.width * vocabulary)
        offsets = torch.arange(self.width, device=hidden.device)
        index = (self.variant[:, None] * self.width + offsets) * vocabulary + self.grid  # (labels, width)
        picked = flat[:, index.reshape(-1)].view(examples, *index.shape)
        valid = self.valid.to(picked.dtype)
        return (picked * valid).sum(-1) / valid.sum(-1)


def pet_forward(model: Any, batch: dict[str, torch.Tensor], with_loss: bool
                ) -> tuple[torch.Tensor | None, tuple[torch.Tensor, ...]]:
    """``heads.forward`` for PET batches: (cross-entropy over the labels or None, (scores,))."""
    inputs = {k: batch[k] for k in ("input_ids", "attention_mask", "mask_start", "token_type_ids") if k in batch}
    scores = model(**inputs)
    loss = F.cross_entropy(scores, batch["labels"]) if with_loss else None
    return loss, (scores,)


class PetCollator:
    """Pads every example's variants into one (examples × variants, tokens) block."""

    def __init__(self, pad_token_id: int, pad_to_multiple_of: int | None = None) -> None:
        self.pad_token_id = pad_token_id
        self.multiple = pad_to_multiple_of

    def __call__(self, items: Sequence[dict[str, Any]]) -> dict[str, torch.Tensor]:
        rows = [ids for item in items for ids in item["variants"]]
        batch = {"index": torch.as_tensor([item["index"] for item in items]),
                 "input_ids": _pad(rows, self.pad_token_id, self.multiple)}
        batch["attention_mask"] = _attention(rows, batch["input_ids"].shape[1])
        batch["mask_start"] = torch.as_tensor([item["mask_start"] for item in items
                                               for _ in item["variants"]])
        if "label" in items[0]:
            batch["labels"] = torch.as_tensor([item["label"] for item in items])
        return batch


def check_mlm_architecture(config: Any, source: str) -> None:
    """Refuse, before anything trains, a checkpoint whose architecture has no masked-LM head."""
    from transformers.models.auto.modeling_auto import MODEL_FOR_MASKED_LM_MAPPING_NAMES

    model_type = getattr(config, "model_type", "")
    if model_type not in MODEL_FOR_MASKED_LM_MAPPING_NAMES:
        raise ClueError(f"method=pet: {source} is a {model_type or 'unknown'} model, which has no masked-LM head "
                        f"in transformers; PET needs a masked-LM encoder (BERT, RoBERTa, ALBERT, ERNIE, …)")
    architectures = list(getattr(config, "architectures", None) or [])
    has_mlm = any(a.endswith(MLM_ARCHITECTURES) and a != "ElectraForPreTraining" for a in architectures)
    if architectures and not has_mlm:
        raise ClueError(f"method=pet: {source} was saved as {', '.join(architectures)}, without a masked-LM head "
                        f"(an ELECTRA discriminator or a fine-tuned head); PET needs the pre-trained MLM head")


def check_loaded_head(model: Any, missing: Sequence[str], source: str) -> None:
    """The weights loaded: a masked-LM head freshly initialised (not in the checkpoint) is refused."""
    prefix = getattr(model, "base_model_prefix", "")
    fresh = sorted(k for k in missing if prefix and not k.startswith(prefix + "."))
    if fresh:
        raise ClueError(f"method=pet: {source} has no masked-LM head weights ({', '.join(fresh[:3])}"
                        f"{', …' if len(fresh) > 3 else ''} would be random); PET needs the pre-trained MLM head")
