"""Classification prediction computes the last encoder layer for the first token only.

A BERT-family sequence classifier reads nothing of the last layer but the first token
(``[CLS]``: BERT's pooler, RoBERTa's and ELECTRA's classification heads all take
``hidden[:, 0]``). In that layer every other token still serves as a key and value of the
first token's attention, but its own query, attention output, feed-forward block and layer
norms are computed and thrown away: on a full-length 128-token batch that is 127/128 of
the layer's work bar the key and value projections, a quarter of a 4-layer model's
prediction time and a twelfth of BERT-base's. :func:`first_token_only` computes that
layer for the first token alone, with the layer's own modules and the model's own
attention kernel, so logits agree with the full forward to float rounding.

It applies only where that is known to be true (the layer and head classes below, no
decoder, cross-attention or feed-forward chunking); anything else runs untouched.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import torch

#: heads that read only the first token of the last hidden state
HEADS = ("BertForSequenceClassification", "RobertaForSequenceClassification",
         "XLMRobertaForSequenceClassification", "ElectraForSequenceClassification")
#: encoder layers laid out as BERT's (attention.self/output, intermediate, output)
LAYERS = ("BertLayer", "RobertaLayer", "XLMRobertaLayer", "ElectraLayer")


def _last_layer(model: Any) -> Any | None:
    """The last encoder layer of a supported classifier in evaluation mode, else None."""
    if type(model).__name__ not in HEADS or model.training:
        return None
    config = model.config
    if config.is_decoder or getattr(config, "add_cross_attention", False) or config.output_hidden_states \
            or config.output_attentions:
        return None
    layers = getattr(getattr(model.base_model, "encoder", None), "layer", None)
    if not layers:
        return None
    layer = layers[-1]
    if type(layer).__name__ not in LAYERS or layer.chunk_size_feed_forward:
        return None
    return layer


def _first_token_forward(layer: Any) -> Any:
    """``layer.forward`` computing the layer's output for the first position only (shape (B, 1, H))."""
    from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS
    from transformers.models.bert.modeling_bert import eager_attention_forward

    attention = layer.attention.self

    def forward(hidden_states: torch.Tensor, attention_mask: torch.Tensor | None = None, *args: Any,
                **kwargs: Any) -> torch.Tensor:
        rows, width, _ = hidden_states.shape
        first = hidden_states[:, :1]
        heads = (rows, -1, attention.attention_head_size)
        query = attention.query(first).view(rows, 1, *heads[1:]).transpose(1, 2)
        key = attention.key(hidden_states).view(rows, width, *heads[1:]).transpose(1, 2)
        value = attention.value(hidden_states).view(rows, width, *heads[1:]).transpose(1, 2)
        if attention_mask is not None and attention_mask.dim() == 4 and attention_mask.shape[2] > 1:
            attention_mask = attention_mask[:, :, :1]
        kernel = ALL_ATTENTION_FUNCTIONS.get_interface(attention.config._attn_implementation, eager_attention_forward)
        output, _ = kernel(attention, query, key, value, attention_mask, dropout=0.0, scaling=attention.scaling)
        output = layer.attention.output(output.reshape(rows, 1, -1).contiguous(), first)
        return layer.output(layer.intermediate(output), output)

    return forward


@contextmanager
def first_token_only(model: Any, kind: str) -> Iterator[bool]:
    """While inside, ``model`` (a classifier in eval mode) computes its last layer for the first
    token only; yields whether it does. The layer's own ``forward`` is back on leaving."""
    layer = _last_layer(model) if kind == "classification" else None
    if layer is None:
        yield False
        return
    layer.forward = _first_token_forward(layer)
    try:
        yield True
    finally:
        del layer.forward
