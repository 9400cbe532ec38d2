"""The vectorised n-best span decoder against straightforward loops over candidate pairs."""

from __future__ import annotations

import numpy as np
import pytest

from clue_models_hf.spans import decode_spans


def loop_decoder(start, end, offsets, mask, n_best, max_len, window_example, num_examples, mask_first):
    """One candidate pair at a time, as transformers' run_qa post-processing does it."""
    best = [(-np.inf, -1, -1)] * num_examples
    for w in range(start.shape[0]):
        s_logits = np.where(mask[w], start[w], -np.inf) if mask_first else start[w]
        e_logits = np.where(mask[w], end[w], -np.inf) if mask_first else end[w]
        starts = np.argsort(s_logits)[::-1][:n_best]
        ends = np.argsort(e_logits)[::-1][:n_best]
        for s in starts:
            for e in ends:
                if not (mask[w, s] and mask[w, e]) or e < s or e - s + 1 > max_len:
                    continue
                score = start[w, s] + end[w, e]
                ex = window_example[w]
                if score > best[ex][0]:
                    best[ex] = (score, offsets[w, s, 0], offsets[w, e, 1])
    return best


def random_windows(rng, windows, tokens, examples):
    start = rng.normal(size=(windows, tokens)).astype(np.float32)
    end = rng.normal(size=(windows, tokens)).astype(np.float32)
    mask = np.zeros((windows, tokens), dtype=bool)
    offsets = np.zeros((windows, tokens, 2), dtype=np.int64)
    for w in range(windows):
        question = rng.integers(2, 8)
        length = rng.integers(question + 3, tokens + 1)
        mask[w, question + 1:length - 1] = True
        positions = np.arange(tokens)
        offsets[w, :, 0] = positions * 2 + w
        offsets[w, :, 1] = positions * 2 + w + 1
    window_example = np.sort(rng.integers(0, examples, size=windows))
    return start, end, offsets, mask, window_example


@pytest.mark.parametrize("mask_first", [False, True])
def test_same_answers_as_the_pairwise_loop(mask_first: bool) -> None:
    rng = np.random.default_rng(0)
    start, end, offsets, mask, window_example = random_windows(rng, 60, 48, 25)
    decoded = decode_spans(start, end, offsets, mask, n_best=5, max_answer_length=6,
                           window_example=window_example, num_examples=25, mask_before_top_k=mask_first)
    expected = loop_decoder(start, end, offsets, mask, 5, 6, window_example, 25, mask_first)
    for ex, (score, char_start, char_end) in enumerate(expected):
        assert decoded.start[ex] == char_start
        assert decoded.end[ex] == char_end
        if np.isfinite(score):
            assert decoded.score[ex] == pytest.approx(score, rel=1e-6)


def test_with_n_best_covering_every_token_the_answer_is_the_exact_optimum() -> None:
    rng = np.random.default_rng(1)
    start, end, offsets, mask, window_example = random_windows(rng, 10, 20, 10)
    decoded = decode_spans(start, end, offsets, mask, n_best=20, max_answer_length=4,
                           window_example=window_example, num_examples=10)
    for ex in range(10):
        best = -np.inf
        for w in np.flatnonzero(window_example == ex):
            for s in range(20):
                for e in range(s, min(20, s + 4)):
                    if mask[w, s] and mask[w, e]:
                        best = max(best, start[w, s] + end[w, e])
        assert decoded.score[ex] == pytest.approx(best) if np.isfinite(best) else decoded.start[ex] == -1


def test_question_tokens_never_crowd_out_the_context() -> None:
    # the 3 highest start/end logits sit on question tokens; run_qa's top-3 then finds nothing
    start = np.array([[0.0, 9, 9, 9, 1, 5, 0, 0]], dtype=np.float32)
    end = np.array([[0.0, 9, 9, 9, 0, 0, 5, 1]], dtype=np.float32)
    mask = np.array([[False, False, False, False, True, True, True, True]])
    offsets = np.stack([np.arange(8) * 3, np.arange(8) * 3 + 3], axis=-1)[None]
    unmasked = decode_spans(start, end, offsets, mask, n_best=3, max_answer_length=10, mask_before_top_k=False)
    masked = decode_spans(start, end, offsets, mask, n_best=3, max_answer_length=10)
    assert unmasked.start[0] == -1 and unmasked.text(0, "x" * 30) == ""
    assert (masked.start[0], masked.end[0]) == (15, 21)  # tokens 5..6


def test_answer_length_limit_and_order() -> None:
    start = np.array([[0.0, 0, 10, 0, 0, 0]], dtype=np.float32)
    end = np.array([[0.0, 8, 0, 1, 0.5, 9]], dtype=np.float32)  # best end comes 3 tokens after the start
    mask = np.array([[False, True, True, True, True, True]])
    offsets = np.stack([np.arange(6), np.arange(6) + 1], axis=-1)[None]
    assert decode_spans(start, end, offsets, mask, 20, 4).end[0] == 6
    # with at most 3 tokens the end at token 5 is out of reach, and the end at token 1 precedes the start
    short = decode_spans(start, end, offsets, mask, 20, 3)
    assert (short.start[0], short.end[0]) == (2, 4)
