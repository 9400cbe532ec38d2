"""decode_windows (the learner's ragged-input decoder) against run_qa's algorithm and the dense decoder."""

from __future__ import annotations

import random

import numpy as np
import pytest

from clue_core.examples import SpanExample
from clue_models_hf import encoding, tiny
from clue_models_hf.spans import _top_k, decode_spans, decode_windows

HANZI = "".join(chr(code) for code in range(0x4E00, 0x4E00 + 300))


def run_qa_answers(contexts, window_example, offsets, ranges, start, end, n_best, max_answer_length):
    """transformers' run_qa post-processing, straightforwardly: every pair of the n-best, stable sort."""
    answers = []
    for example, context in enumerate(contexts):
        candidates = []
        for w in [w for w, e in enumerate(window_example) if e == example]:
            first, stop = ranges[w]
            starts = np.argsort(-start[w], kind="stable")[:n_best]
            ends = np.argsort(-end[w], kind="stable")[:n_best]
            for s in starts:
                for e in ends:
                    if not (first <= s < stop and first <= e < stop) or e < s or e - s + 1 > max_answer_length:
                        continue
                    candidates.append((start[w, s] + end[w, e], offsets[w][s][0], offsets[w][e][1]))
        ranked = sorted(candidates, key=lambda c: c[0], reverse=True)
        answers.append(context[ranked[0][1]:ranked[0][2]] if ranked else "empty")
    return answers


@pytest.fixture(scope="module")
def windows():
    """Real windows: random Chinese contexts with Latin words, several windows for the long ones."""
    rng = random.Random(5)
    examples = []
    for i in range(40):
        words = [rng.choice(HANZI) if rng.random() > 0.1 else rng.choice(["NBA", "3.14", "iPhone"])
                 for _ in range(rng.randint(5, 150))]
        examples.append(SpanExample(i, "".join(words), "".join(rng.choice(HANZI) for _ in range(6)), None))
    tokenizer = tiny.build_tokenizer([HANZI, "NBA 3.14 iPhone"])
    features = encoding.encode_spans(tokenizer, examples, max_length=48, doc_stride=12, max_query_length=8,
                                     with_labels=False)
    return examples, features


def logits(rng: np.random.Generator, windows: int, width: int, integer: bool = False) -> np.ndarray:
    if integer:  # many ties
        return rng.integers(-3, 4, size=(windows, width)).astype(np.float32)
    return rng.normal(size=(windows, width)).astype(np.float32)


def test_context_ranges_describe_the_context_mask(windows) -> None:
    _, features = windows
    assert len(features) > len(windows[0])  # some contexts needed several windows
    for mask, (first, stop) in zip(features.context_mask, features.context_ranges):
        assert [first <= t < stop for t in range(len(mask))] == mask
        assert stop > first


@pytest.mark.parametrize("n_best", [1, 3, 20])
def test_same_answers_as_run_qa(windows, n_best: int) -> None:
    examples, features = windows
    rng = np.random.default_rng(n_best)
    start, end = (logits(rng, len(features), 48) for _ in range(2))
    decoded = decode_windows(start, end, features.offsets, features.context_ranges, n_best=n_best,
                             max_answer_length=5, window_example=features.example_index,
                             num_examples=len(examples), mask_before_top_k=False)
    ours = [decoded.text(i, e.context) for i, e in enumerate(examples)]
    expected = run_qa_answers([e.context for e in examples], features.example_index, features.offsets,
                              features.context_ranges, start, end, n_best, 5)
    assert [a if a != "empty" else "" for a in expected] == ours
    if n_best == 1:  # a single start/end pair is often invalid: run_qa's "empty", our empty string
        assert "empty" in expected and any(ours)
    else:
        assert sum(map(bool, ours)) > len(examples) // 2  # non-trivial: most examples have an answer


@pytest.mark.parametrize("mask_first", [False, True])
@pytest.mark.parametrize("integer", [False, True])
def test_same_as_the_dense_decoder(windows, mask_first: bool, integer: bool) -> None:
    examples, features = windows
    rng = np.random.default_rng(11)
    width = max(features.lengths) + 3  # logits wider than any window, as a padded batch is
    start, end = (logits(rng, len(features), width, integer) for _ in range(2))
    offsets = np.zeros((len(features), width, 2), dtype=np.int64)
    mask = np.zeros((len(features), width), dtype=bool)
    for i, (row, inside) in enumerate(zip(features.offsets, features.context_mask)):
        offsets[i, : len(row)] = row
        mask[i, : len(inside)] = inside
    dense = decode_spans(start, end, offsets, mask, 4, 6, np.asarray(features.example_index), len(examples),
                         mask_first)
    ragged = decode_windows(start, end, features.offsets, features.context_ranges, 4, 6, features.example_index,
                            len(examples), mask_first)
    for got, want in ((ragged.start, dense.start), (ragged.end, dense.end), (ragged.score, dense.score)):
        np.testing.assert_array_equal(got, want)
    assert (ragged.start >= 0).sum() > len(examples) // 2


def test_top_k_breaks_ties_by_lower_index() -> None:
    rng = np.random.default_rng(3)
    values = logits(rng, 200, 30, integer=True)
    values[0] = 1.0  # a whole row of ties
    values[1, :5] = -np.inf
    for k in (1, 4, 29, 30):
        expected = np.argsort(-values, axis=1, kind="stable")[:, :k]
        np.testing.assert_array_equal(_top_k(values, k), expected)


def test_nan_logits_are_never_chosen() -> None:
    start = np.array([[np.nan, 1.0, 0.0, 2.0]], dtype=np.float32)
    end = np.array([[0.0, np.nan, 3.0, 0.5]], dtype=np.float32)
    offsets = [[(0, 1), (1, 2), (2, 3), (3, 4)]]
    decoded = decode_windows(start, end, offsets, [(0, 4)], n_best=4, max_answer_length=4)
    assert (decoded.start[0], decoded.end[0]) == (1, 3)  # start token 1, end token 2: 1 + 3 beats 2 + 0.5


def test_windows_without_context_and_bad_ranges() -> None:
    start = end = np.zeros((2, 4), dtype=np.float32)
    offsets = [[(0, 1)] * 4, [(0, 1)] * 4]
    decoded = decode_windows(start, end, offsets, [(0, 0), (2, 2)], window_example=[0, 1])
    assert decoded.start.tolist() == [-1, -1] and decoded.text(0, "abc") == ""
    with pytest.raises(ValueError, match="context ranges"):
        decode_windows(start, end, offsets, [(0, 5), (0, 1)])
    with pytest.raises(ValueError, match="2 windows of offsets but 1 context ranges"):
        decode_windows(start, end, offsets, [(0, 1)])
    with pytest.raises(ValueError, match="logits of shapes"):
        decode_windows(start[:1], end[:1], offsets, [(0, 1), (0, 1)])
    empty = decode_windows(np.zeros((0, 0)), np.zeros((0, 0)), [], [], num_examples=2)
    assert empty.start.tolist() == [-1, -1]
