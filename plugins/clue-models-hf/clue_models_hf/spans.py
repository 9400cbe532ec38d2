"""N-best span decoding, vectorised over all windows at once.

For every window (feature) the ``n_best`` highest start and end logits among its context
tokens form an ``n_best × n_best`` grid of candidate spans; spans that end before they
start or are longer than ``max_answer_length`` tokens are masked, the best remaining one
per window is kept, and each example takes its best window. This is the algorithm of
transformers' ``run_qa`` post-processing (score = start logit + end logit), done with a
handful of numpy array operations instead of Python loops over every candidate pair.

One deliberate difference, switchable: by default the top-k is taken *after* masking
non-context tokens, so question tokens can never crowd real candidates out of the n-best
lists; ``mask_before_top_k=False`` takes the top-k over all tokens first, exactly like
``run_qa``, which then discards the out-of-context picks.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

NEG = np.float32(-np.inf)


@dataclass(frozen=True)
class DecodedSpans:
    """Per example: character ``start``/``end`` into its context (``-1`` where no valid span) and ``score``."""

    start: np.ndarray
    end: np.ndarray
    score: np.ndarray

    def text(self, example: int, context: str) -> str:
        s, e = int(self.start[example]), int(self.end[example])
        return context[s:e] if s >= 0 else ""


def best_window_spans(
    start_logits: np.ndarray,
    end_logits: np.ndarray,
    context_mask: np.ndarray,
    n_best: int = 20,
    max_answer_length: int = 30,
    mask_before_top_k: bool = True,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Best (start token, end token, score) of every window; score ``-inf`` where none is valid.

    Inputs are ``(windows, tokens)`` arrays; ``context_mask`` is True on context tokens.
    """
    start_logits = np.asarray(start_logits, dtype=np.float32)
    end_logits = np.asarray(end_logits, dtype=np.float32)
    context_mask = np.asarray(context_mask, dtype=bool)
    windows, tokens = start_logits.shape
    if windows == 0 or tokens == 0:
        empty = np.zeros(windows, dtype=np.int64)
        return empty, empty.copy(), np.full(windows, NEG)
    k = max(1, min(n_best, tokens))
    if mask_before_top_k:
        start_logits = np.where(context_mask, start_logits, NEG)
        end_logits = np.where(context_mask, end_logits, NEG)
    top_start = _top_k(start_logits, k)
    top_end = _top_k(end_logits, k)
    rows = np.arange(windows)[:, None]
    scores = (np.take_along_axis(start_logits, top_start, 1)[:, :, None]
              + np.take_along_axis(end_logits, top_end, 1)[:, None, :])
    length = top_end[:, None, :] - top_start[:, :, None]
    valid = ((length >= 0) & (length < max_answer_length)
             & context_mask[rows, top_start][:, :, None] & context_mask[rows, top_end][:, None, :])
    scores = np.where(valid, scores, NEG)
    flat = scores.reshape(windows, -1)
    best = flat.argmax(axis=1)
    best_score = flat[np.arange(windows), best]
    return top_start[np.arange(windows), best // k], top_end[np.arange(windows), best % k], best_score


def _top_k(values: np.ndarray, k: int) -> np.ndarray:
    """Indices of the k largest values per row, largest first (stable for ties: lower index first)."""
    if k >= values.shape[1]:
        return np.argsort(-values, axis=1, kind="stable")
    part = np.argpartition(-values, k - 1, axis=1)[:, :k]
    picked = np.take_along_axis(values, part, 1)
    order = np.lexsort((part, -picked), axis=1)
    return np.take_along_axis(part, order, 1)


def decode_spans(
    start_logits: np.ndarray,
    end_logits: np.ndarray,
    offsets: np.ndarray,
    context_mask: np.ndarray,
    n_best: int = 20,
    max_answer_length: int = 30,
    window_example: np.ndarray | None = None,
    num_examples: int | None = None,
    mask_before_top_k: bool = True,
) -> DecodedSpans:
    """Best answer span per example, in context characters.

    ``start_logits``/``end_logits``/``context_mask``: ``(windows, tokens)``; ``offsets``:
    ``(windows, tokens, 2)`` character offsets into the example's context;
    ``window_example``: the example each window belongs to (default: one window each).
    Pad shorter windows with any logits and ``context_mask=False``.
    """
    offsets = np.asarray(offsets, dtype=np.int64)
    windows = offsets.shape[0]
    if window_example is None:
        window_example = np.arange(windows)
    window_example = np.asarray(window_example, dtype=np.int64)
    if num_examples is None:
        num_examples = int(window_example.max()) + 1 if windows else 0
    start_tok, end_tok, score = best_window_spans(start_logits, end_logits, context_mask, n_best,
                                                  max_answer_length, mask_before_top_k)
    start = np.full(num_examples, -1, dtype=np.int64)
    end = np.full(num_examples, -1, dtype=np.int64)
    best = np.full(num_examples, NEG, dtype=np.float32)
    if windows:
        # best window per example: sort by example, then by falling score (first window wins ties)
        order = np.lexsort((np.arange(windows), -score, window_example))
        first = np.ones(windows, dtype=bool)
        first[1:] = window_example[order][1:] != window_example[order][:-1]
        chosen = order[first & np.isfinite(score[order])]
        ex = window_example[chosen]
        rows = np.arange(windows)
        start[ex] = offsets[rows[chosen], start_tok[chosen], 0]
        end[ex] = offsets[rows[chosen], end_tok[chosen], 1]
        best[ex] = score[chosen]
    return DecodedSpans(start, end, best)
