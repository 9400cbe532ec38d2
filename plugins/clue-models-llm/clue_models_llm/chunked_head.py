"""The model's output head on chosen hidden states only, a bounded chunk of positions at a time.

Scoring needs the log-probability of one token at a few positions, but a causal LM's own
forward returns every position's logits over the whole vocabulary: a classification question
with 119 labels of a few tokens each, against gemma-3's 262,144-token vocabulary, is 0.4 GB
of float32 logits at once, twice over for the log-softmax. :class:`Head` runs the model's
decoder (hidden states are small), then applies the model's own head (its output
embeddings, then ``final_logit_softcapping`` where the config has one, as Gemma 2 and 3 do)
to the positions that are scored, at most ``budget`` logits at a time, keeping each
position's log-sum-exp and the logits of its targets only.

Whether the head path equals the model's forward is checked once per model on a probe
(within 1e-4); a model whose forward does more to its logits (a scale, a bias added
elsewhere) falls back to its own forward, whose logits are then read at the scored
positions the same way.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

import torch

from clue_models_llm.runtime import forward

#: Most logits (positions x vocabulary) one chunk of the head computes: 128 MiB in float32.
HEAD_BUDGET = 1 << 25
_AGREES: weakref.WeakKeyDictionary[Any, bool] = weakref.WeakKeyDictionary()


def _text_config(model: Any) -> Any:
    config = getattr(model, "config", None)  # a module without one (a test's scripted model): no head path
    return config.get_text_config() if hasattr(config, "get_text_config") else config


def _decoder(model: Any) -> Any:
    try:
        decoder = model.get_decoder()
    except (AttributeError, ValueError, NotImplementedError):
        return None
    return decoder if decoder is not None and decoder is not model else None


class Head:
    """Hidden states of a model's decoder and log-probabilities from its head (see the module docstring)."""

    def __init__(self, model: Any, budget: int = HEAD_BUDGET) -> None:
        self.model = model
        self.linear = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
        self.decoder = _decoder(model)
        self.softcap = getattr(_text_config(model), "final_logit_softcapping", None)
        self.vocab = int(self.linear.weight.shape[0]) if self.linear is not None else 1
        self.chunk = max(1, budget // max(self.vocab, 1))
        self.direct = self.decoder is not None and self.linear is not None and self._agrees()

    def _agrees(self) -> bool:
        """Whether decoder + head gives the model's own logits (checked once per model, on a probe)."""
        if self.model in _AGREES:
            return _AGREES[self.model]
        device = self.linear.weight.device
        probe = torch.arange(min(5, self.vocab), device=device).unsqueeze(0)
        with torch.inference_mode():
            try:
                own = self.model(input_ids=probe).logits.float()
                mine = self.logits(self.decoder(input_ids=probe).last_hidden_state)
                agrees = own.shape == mine.shape and bool(
                    (own - mine).abs().max() <= 1e-4 * max(1.0, float(own.abs().max())))
            except Exception:  # a decoder that wants other arguments: the model's forward is the way
                agrees = False
        _AGREES[self.model] = agrees
        return agrees

    def logits(self, hidden: torch.Tensor) -> torch.Tensor:
        """The head on ``hidden`` (float32), as the model's forward computes it."""
        logits = self.linear(hidden).float()
        if self.softcap:
            logits = torch.tanh(logits / self.softcap) * self.softcap
        return logits

    def few(self, hidden: torch.Tensor) -> torch.Tensor:
        """The head on a few states ``[N, D]`` (a generation step's rows), as :meth:`logits` computes it.

        A plain float32 ``Linear`` without bias is applied as ``W @ hidden.T``: the same sums, but as
        a product whose large operand is read along its rows, which the CPU's BLAS computes faster than
        ``F.linear`` for a few rows of gemma-3's 262k x 640 head (``benchmarks/head_rows.py`` prints
        the ratio); the results differ in the last bits only (summation order).
        """
        weight = getattr(self.linear, "weight", None)
        if (type(self.linear) is not torch.nn.Linear or self.linear.bias is not None or weight is None
                or weight.dtype != torch.float32 or hidden.dtype != torch.float32 or hidden.dim() != 2
                or hasattr(self.linear, "_hf_hook") or weight.device != hidden.device):
            return self.logits(hidden)  # accelerate's hooks (offloaded or placed weights) run in the module's call
        logits = torch.mm(weight, hidden.T).T
        if self.softcap:
            logits = torch.tanh(logits / self.softcap) * self.softcap
        return logits.contiguous()

    def last(self, ids: torch.Tensor, mask: Any, positions: torch.Tensor, cache: Any) -> torch.Tensor:
        """Each row's logits at its last column after a pass that extends ``cache`` (``[rows, vocab]``)."""
        if self.direct:
            return self.few(forward(self.decoder, ids, mask, positions, cache).last_hidden_state[:, -1, :])
        return forward(self.model, ids, mask, positions, cache, logits_to_keep=1).logits[:, -1, :]

    def extend(self, ids: torch.Tensor, mask: Any, positions: torch.Tensor, cache: Any) -> None:
        """A pass that only extends ``cache`` (a shared prefix): no head at all where the decoder runs alone."""
        if self.direct:
            forward(self.decoder, ids, mask, positions, cache)
        else:
            forward(self.model, ids, mask, positions, cache, logits_to_keep=1)

    def run(self, ids: torch.Tensor, mask: Any, positions: torch.Tensor, cache: Any, *, last_only: bool = False
            ) -> torch.Tensor:
        """Per position: the decoder's hidden state, or (no head path) the model's own logits."""
        if self.direct:
            return forward(self.decoder, ids, mask, positions, cache).last_hidden_state
        return forward(self.model, ids, mask, positions, cache, logits_to_keep=1 if last_only else 0).logits

    @torch.inference_mode()
    def picked(self, states: torch.Tensor, index: torch.Tensor, targets: torch.Tensor,
               observe: Callable[[int], None] | None = None) -> torch.Tensor:
        """``log p(targets[k] | states[index[k]])`` for every ``k``, float32 on the CPU.

        ``states`` is ``[N, D]`` (hidden states or logits); the head runs once on each state
        that a target reads (however many do), ``self.chunk`` states at a time.
        """
        result = torch.empty(len(index), dtype=torch.float32)
        if not len(index):
            return result
        used, slot = torch.unique(index.to(states.device), return_inverse=True)
        targets = targets.to(states.device)
        order = torch.argsort(slot)
        sorted_slot = slot[order]
        for start in range(0, len(used), self.chunk):
            end = min(start + self.chunk, len(used))
            chunk = states[used[start:end]]
            logits = self.logits(chunk) if self.direct else chunk.float()
            if observe is not None:
                observe(logits.numel())
            lo = int(torch.searchsorted(sorted_slot, start))
            hi = int(torch.searchsorted(sorted_slot, end))
            which = order[lo:hi]
            rows = slot[which] - start
            wanted = logits[rows, targets[which]]
            normaliser = _logsumexp_(logits)  # a fresh block: the head's output, or a copy of indexed logits
            result[which.cpu()] = (wanted - normaliser[rows]).cpu()
            del logits, normaliser
        return result


def _logsumexp_(logits: torch.Tensor) -> torch.Tensor:
    """``logsumexp`` over the last dimension, overwriting ``logits``: no second block of that size.

    ``torch.logsumexp`` keeps its ``exp`` in a temporary as large as its input (another 128 MiB
    at the default budget); the same steps done in place leave only one row-sized vector.
    """
    top = logits.amax(dim=-1, keepdim=True)
    top = torch.where(torch.isfinite(top), top, torch.zeros_like(top))
    return logits.sub_(top).exp_().sum(dim=-1).log_().add_(top.squeeze(-1))
