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

Two entry points: :func:`decode_spans` takes dense ``(windows, tokens, 2)`` offsets and a
dense context mask; :func:`decode_windows` takes the per-window offset lists and context
ranges exactly as :func:`clue_models_hf.encoding.encode_spans` makes them. The second
exists for speed: copying a few thousand 512-token lists into dense arrays costs several
times more than the decode itself, while only two offsets per example are ever read.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

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
    NaN logits count as ``-inf`` (never chosen).
    """
    mask = np.asarray(context_mask, dtype=bool)
    return _best_spans(start_logits, end_logits, lambda: mask, lambda rows, tokens: mask[rows, tokens],
                       n_best, max_answer_length, mask_before_top_k)


def _best_spans(
    start_logits: np.ndarray,
    end_logits: np.ndarray,
    dense_mask: Callable[[], np.ndarray],
    mask_at: Callable[[np.ndarray, np.ndarray], np.ndarray],
    n_best: int,
    max_answer_length: int,
    mask_before_top_k: bool,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`best_window_spans` over a context given as a whole mask or as a per-token lookup.

    The lookup is all the run_qa order needs (context checks on the n-best only); the
    whole mask is built only when masking comes first.
    """
    start_logits = _nan_to_neg(np.asarray(start_logits, dtype=np.float32))
    end_logits = _nan_to_neg(np.asarray(end_logits, dtype=np.float32))
    windows, tokens = start_logits.shape
    if windows == 0 or tokens == 0:
        empty = np.zeros(windows, dtype=np.int64)
        return empty, empty.copy(), np.full(windows, NEG)
    k = max(1, min(n_best, tokens))
    if mask_before_top_k:
        mask = dense_mask()
        start_logits = np.where(mask, start_logits, NEG)
        end_logits = np.where(mask, end_logits, NEG)
    top_start = _top_k(start_logits, k)
    top_end = _top_k(end_logits, k)
    rows = np.arange(windows)[:, None]
    scores = (np.take_along_axis(start_logits, top_start, 1)[:, :, None]
              + np.take_along_axis(end_logits, top_end, 1)[:, None, :])
    length = top_end[:, None, :] - top_start[:, :, None]
    valid = ((length >= 0) & (length < max_answer_length)
             & mask_at(rows, top_start)[:, :, None] & mask_at(rows, top_end)[:, None, :])
    flat = np.where(valid, scores, NEG).reshape(windows, -1)
    best = flat.argmax(axis=1)  # first in (start rank, end rank) order on ties, as run_qa's stable sort
    every = np.arange(windows)
    return top_start[every, best // k], top_end[every, best % k], flat[every, best]


def _nan_to_neg(values: np.ndarray) -> np.ndarray:
    nan = np.isnan(values)
    return np.where(nan, NEG, values) if nan.any() else values


def _top_k(values: np.ndarray, k: int) -> np.ndarray:
    """Indices of the k largest values per row, largest first; ties go to the lower index.

    ``np.partition`` finds each row's k-th largest value several times faster than
    ``np.argpartition`` finds the indices; comparing with that threshold then gives them
    (a flat ``nonzero`` keeps each row's in index order).
    """
    rows, n = values.shape
    if k >= n:
        return np.argsort(-values, axis=1, kind="stable")
    threshold = np.partition(values, n - k, axis=1)[:, n - k, None]
    chosen = values >= threshold
    crowded = np.flatnonzero(chosen.sum(axis=1) > k)
    if len(crowded):
        # several values equal the threshold: keep only the lowest-indexed ones needed
        part, limit = values[crowded], threshold[crowded]
        above = part > limit
        equal = part == limit
        need = k - above.sum(axis=1, keepdims=True)
        chosen[crowded] = above | (equal & (np.cumsum(equal, axis=1) <= need))
    picked = (np.flatnonzero(chosen) % n).reshape(rows, k)
    order = np.argsort(-np.take_along_axis(values, picked, 1), axis=1, kind="stable")
    return np.take_along_axis(picked, order, 1)


def _best_window_per_example(score: np.ndarray, window_example: np.ndarray) -> np.ndarray:
    """The window that wins each example (highest score, first window on ties); none where all are -inf."""
    windows = score.shape[0]
    order = np.lexsort((np.arange(windows), -score, window_example))
    first = np.ones(windows, dtype=bool)
    first[1:] = window_example[order][1:] != window_example[order][:-1]
    return order[first & np.isfinite(score[order])]


def _per_example(
    start_tok: np.ndarray,
    end_tok: np.ndarray,
    score: np.ndarray,
    window_example: np.ndarray,
    num_examples: int,
    characters: Callable[[np.ndarray, np.ndarray, int], Any],
) -> DecodedSpans:
    """Each example's best window, its span turned into character offsets by ``characters``.

    ``characters(windows, tokens, side)`` looks up side 0 (start) or 1 (end) of the given
    tokens' offsets; examples without any candidate keep ``-1`` and a score of -inf.
    """
    start = np.full(num_examples, -1, dtype=np.int64)
    end = np.full(num_examples, -1, dtype=np.int64)
    best = np.full(num_examples, NEG, dtype=np.float32)
    if len(score):
        chosen = _best_window_per_example(score, window_example)
        ex = window_example[chosen]
        start[ex] = characters(chosen, start_tok[chosen], 0)
        end[ex] = characters(chosen, end_tok[chosen], 1)
        best[ex] = score[chosen]
    return DecodedSpans(start, end, best)


def _examples_of(window_example: np.ndarray | Sequence[int] | None, windows: int,
                 num_examples: int | None) -> tuple[np.ndarray, int]:
    if window_example is None:
        window_example = np.arange(windows)
    window_example = np.asarray(window_example, dtype=np.int64)
    if num_examples is None:
        num_examples = int(window_example.max()) + 1 if windows else 0
    return window_example, num_examples


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
    window_example, num_examples = _examples_of(window_example, windows, num_examples)
    start_tok, end_tok, score = best_window_spans(start_logits, end_logits, context_mask, n_best,
                                                  max_answer_length, mask_before_top_k)

    def characters(chosen: np.ndarray, tokens: np.ndarray, side: int) -> Any:
        return offsets[chosen, tokens, side]

    return _per_example(start_tok, end_tok, score, window_example, num_examples, characters)


def decode_windows(
    start_logits: np.ndarray,
    end_logits: np.ndarray,
    offsets: Sequence[Sequence[tuple[int, int]]],
    context_ranges: Sequence[tuple[int, int]],
    n_best: int = 20,
    max_answer_length: int = 30,
    window_example: np.ndarray | Sequence[int] | None = None,
    num_examples: int | None = None,
    mask_before_top_k: bool = True,
) -> DecodedSpans:
    """:func:`decode_spans` over ragged windows: per-window offset lists and context token ranges.

    ``context_ranges[w] = (first, stop)``: window ``w``'s context tokens are
    ``first .. stop - 1`` (a pair encoding's second sequence is one run); ``first == stop``
    for none. ``start_logits``/``end_logits``: ``(windows, tokens)``, at least as wide as the
    longest window. Same answers as :func:`decode_spans` on the same windows made dense.
    """
    windows = len(offsets)
    start_logits = np.asarray(start_logits, dtype=np.float32)
    end_logits = np.asarray(end_logits, dtype=np.float32)
    if windows == 0:
        start_logits = end_logits = np.zeros((0, 0), dtype=np.float32)
    if start_logits.ndim != 2 or len(start_logits) != windows or end_logits.shape != start_logits.shape:
        raise ValueError(f"{windows} windows of offsets but logits of shapes {start_logits.shape} and "
                         f"{end_logits.shape}")
    ranges = np.asarray(context_ranges, dtype=np.int64).reshape(-1, 2)
    if len(ranges) != windows:
        raise ValueError(f"{windows} windows of offsets but {len(ranges)} context ranges")
    width = start_logits.shape[1]
    if windows and (ranges[:, 1].max() > width or (ranges[:, 0] > ranges[:, 1]).any()):
        raise ValueError(f"context ranges must satisfy 0 <= first <= stop <= {width} (the logits' width)")
    first, stop = ranges[:, :1], ranges[:, 1:]

    def dense_mask() -> np.ndarray:
        positions = np.arange(width)
        return (positions >= first) & (positions < stop)

    def mask_at(rows: np.ndarray, tokens: np.ndarray) -> np.ndarray:  # rows: every window, in order
        return (tokens >= first) & (tokens < stop)

    window_example, num_examples = _examples_of(window_example, windows, num_examples)
    start_tok, end_tok, score = _best_spans(start_logits, end_logits, dense_mask, mask_at, n_best,
                                            max_answer_length, mask_before_top_k)

    def characters(chosen: np.ndarray, tokens: np.ndarray, side: int) -> Any:  # ragged: two lookups per example
        return [offsets[w][t][side] for w, t in zip(chosen.tolist(), tokens.tolist())]

    return _per_example(start_tok, end_tok, score, window_example, num_examples, characters)
