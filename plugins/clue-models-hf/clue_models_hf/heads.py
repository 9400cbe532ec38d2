"""Transformers' Auto head per example kind, and one forward pass that returns loss and scores.

Entity spans use ``AutoModelForTokenClassification`` for both NER heads: the BIO head's labels
are its classes (forward kind ``entity_spans:bio``); the span head's one linear layer has
``2 × (types + 1)`` outputs, read as start and end labels (``entity_spans:span``), each with its
own cross-entropy (CLUENER2020's BERT+Span baseline: the two losses averaged).

Multiple choice runs only the real choices through the encoder: the flattened rows are
handed to ``AutoModelForMultipleChoice`` as a single "example" of N choices, and the
scores are scattered back into a (batch, max choices) grid whose empty cells are masked.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

from clue_core.plugin import CLASSIFICATION, MULTIPLE_CHOICE, SPAN
from clue_models_hf.hooks import KBQA_TRIPLE
from clue_models_hf.ner_tags import BIO, ENTITY_SPANS, IGNORE, SPAN_HEAD

NER_BIO = f"{ENTITY_SPANS}:{BIO}"
NER_SPAN = f"{ENTITY_SPANS}:{SPAN_HEAD}"


def auto_class(kind: str) -> Any:
    import transformers

    return {
        CLASSIFICATION: transformers.AutoModelForSequenceClassification,
        SPAN: transformers.AutoModelForQuestionAnswering,
        MULTIPLE_CHOICE: transformers.AutoModelForMultipleChoice,
        ENTITY_SPANS: transformers.AutoModelForTokenClassification,
        KBQA_TRIPLE: transformers.AutoModelForMultipleChoice,  # a question's candidate triples as its choices
    }[kind]


MODEL_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def forward(model: Any, batch: dict[str, torch.Tensor], kind: str, with_loss: bool
            ) -> tuple[torch.Tensor | None, tuple[torch.Tensor, ...]]:
    """(loss or None, outputs): class logits, (start, end) logits, masked choice logits, per-token
    BIO logits or (start, end) label logits per token, or PET's label scores (``kind`` "pet":
    :mod:`clue_models_hf.pet_scoring`)."""
    if kind == "pet":
        from clue_models_hf.pet_scoring import pet_forward

        return pet_forward(model, batch, with_loss)
    inputs = {k: batch[k] for k in MODEL_INPUTS if k in batch}
    if kind == MULTIPLE_CHOICE:
        flat = model(**{k: v.unsqueeze(0) for k, v in inputs.items()}).logits.reshape(-1).float()
        mask = batch["choice_mask"]
        grid = flat.new_full((mask.numel(),), torch.finfo(torch.float32).min)
        grid = grid.index_put((batch["choice_slot"],), flat).view(mask.shape)
        loss = F.cross_entropy(grid, batch["labels"]) if with_loss else None
        return loss, (grid,)
    if kind in (NER_BIO, NER_SPAN):
        return _entities(model, inputs, batch, kind, with_loss)
    if kind == SPAN:
        extra = {"start_positions": batch["start_positions"], "end_positions": batch["end_positions"]} if with_loss \
            else {}
        out = model(**inputs, **extra)
        return (out.loss if with_loss else None), (out.start_logits.float(), out.end_logits.float())
    out = model(**inputs, **({"labels": batch["labels"]} if with_loss else {}))
    return (out.loss if with_loss else None), (out.logits.float(),)


def _entities(model: Any, inputs: dict[str, torch.Tensor], batch: dict[str, torch.Tensor], kind: str,
              with_loss: bool) -> tuple[torch.Tensor | None, tuple[torch.Tensor, ...]]:
    logits = model(**inputs).logits.float()
    if kind == NER_BIO:
        loss = F.cross_entropy(logits.flatten(0, 1), batch["tags"].flatten(), ignore_index=IGNORE) if with_loss \
            else None
        return loss, (logits,)
    half = logits.shape[-1] // 2
    starts, ends = logits[..., :half], logits[..., half:]
    loss = None
    if with_loss:
        loss = (F.cross_entropy(starts.flatten(0, 1), batch["start_tags"].flatten(), ignore_index=IGNORE)
                + F.cross_entropy(ends.flatten(0, 1), batch["end_tags"].flatten(), ignore_index=IGNORE)) / 2
    return loss, (starts, ends)
