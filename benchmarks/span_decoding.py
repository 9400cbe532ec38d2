"""Benchmark: n-best span decoding against transformers' run_qa post-processing, written out.

The baseline is the algorithm of ``postprocess_qa_predictions`` in transformers'
``examples/pytorch/question-answering/utils_qa.py`` (SQuAD v1, no null answer), in our
own words: per window, sort the start and the end logits and take the ``n_best`` highest
of each; try every (start, end) pair of those, skipping tokens outside the context, ends
before starts and spans longer than ``max_answer_length``; score = start + end logit;
per example sort all candidates of all its windows by score and answer with the best
(the literal text "empty" when there is none). It leaves out run_qa's n-best JSON and
softmax probabilities, which clue-core does not produce either: that only makes the
baseline faster.

clue-core's side is ``clue_models_hf.spans.decode_windows`` over the encoder's own
per-window offset lists and context ranges, then one slice of the context per example.
It runs with ``mask_before_top_k=False`` (run_qa's candidate set) and the answers must be
identical, which the script asserts; the learner's default (mask first) is timed too, and
so is the older dense path (copy every window's offsets and mask into dense arrays, then
``decode_spans``), which the HF learner takes until it calls ``decode_windows``.

Data: 3,219 synthetic questions (the size of CMRC2018 dev) on contexts of 100–2,000
characters (mostly Chinese, with Latin words and numbers, mean about 550), windowed by
``encode_spans`` with the offline character tokenizer at max_length 512, doc_stride 128,
max_query_length 64; n-best 20, max answer length 50. Logits from a fixed seed, shaped
like a fine-tuned model's: context tokens N(0, 1) with one confident start/end peak per
example, question and special tokens N(-2, 1), padding up to 512 N(-6, 1); no two
logits of a row are equal, so tie order can not decide an answer.

    python benchmarks/span_decoding.py            # full size, best of 3
    python benchmarks/span_decoding.py --quick    # 300 questions, 1 repeat
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "plugins" / "clue-models-hf")]

import numpy as np  # noqa: E402
from timing import best_of  # noqa: E402  (benchmarks/ is on sys.path when run as a script)

from clue_core.examples import SpanExample  # noqa: E402
from clue_models_hf import encoding, tiny  # noqa: E402
from clue_models_hf.spans import decode_spans, decode_windows  # noqa: E402

HANZI = "".join(chr(code) for code in range(0x4E00, 0x4E00 + 2500))
LATIN = ["Nexon", "USS Port Royal", "CG-73", "2v2", "U.S. Army", "1,000", "3.14", "iPhone", "NBA", "GDP"]
N_BEST, MAX_ANSWER, MAX_LENGTH, DOC_STRIDE, MAX_QUERY = 20, 50, 512, 128, 64
EMPTY = "empty"  # run_qa's answer when no candidate survives


def synthetic_examples(n_questions: int, seed: int = 2018) -> list[SpanExample]:
    rng = random.Random(seed)

    def text(length: int) -> str:
        parts: list[str] = []
        size = 0
        while size < length:
            roll = rng.random()
            parts.append(rng.choice(LATIN) if roll < 0.03 else str(rng.randint(1, 2024)) if roll < 0.06
                         else rng.choice(HANZI))
            size += len(parts[-1])
        return "".join(parts)

    examples = []
    for i in range(n_questions):
        context = text(min(2000, 100 + int(rng.gammavariate(3.0, 150.0))))
        examples.append(SpanExample(f"DEV_{i}_QUERY_0", context, text(rng.randint(6, 25)) + "？", None))
    return examples


def synthetic_logits(features: encoding.Features, width: int, seed: int = 7) -> tuple[np.ndarray, np.ndarray]:
    """(windows, width) start and end logits as described in the module docstring; tie-free rows."""
    rng = np.random.default_rng(seed)
    windows = len(features)
    arrays = []
    for _ in range(2):
        values = rng.normal(-6.0, 1.0, size=(windows, width))
        for w, (length, inside) in enumerate(zip(features.lengths, features.context_mask)):
            inside_row = np.asarray(inside)
            values[w, :length] = np.where(inside_row, rng.normal(0.0, 1.0, length), rng.normal(-2.0, 1.0, length))
        arrays.append(values.astype(np.float32))
    start, end = arrays
    first_window: dict[int, int] = {}
    for w, example in enumerate(features.example_index):
        first_window.setdefault(example, w)
    for w in first_window.values():  # one confident answer per example, in its first window
        context = np.flatnonzero(features.context_mask[w])
        s = int(rng.choice(context[: max(1, len(context) - 10)]))
        start[w, s] += 4.0
        end[w, min(context[-1], s + int(rng.integers(0, 11)))] += 4.0
    return untie(start), untie(end)


def untie(values: np.ndarray) -> np.ndarray:
    """Nudge equal float32 values within a row apart by one ulp until every row is tie-free."""
    while True:
        order = np.argsort(values, axis=1, kind="stable")
        ordered = np.take_along_axis(values, order, 1)
        rows, columns = np.nonzero(ordered[:, 1:] == ordered[:, :-1])
        if not len(rows):
            return values
        values[rows, order[rows, columns + 1]] = np.nextafter(ordered[rows, columns + 1], np.float32(np.inf))


def run_qa_postprocess(
    examples: Sequence[SpanExample],
    window_example: Sequence[int],
    offset_mapping: Sequence[Sequence[tuple[int, int] | None]],
    start_logits: np.ndarray,
    end_logits: np.ndarray,
    n_best: int,
    max_answer_length: int,
) -> list[str]:
    """The run_qa post-processing algorithm (see the module docstring), one candidate pair at a time."""
    windows_of: dict[int, list[int]] = {}
    for window, example in enumerate(window_example):
        windows_of.setdefault(example, []).append(window)
    answers = []
    for index, example in enumerate(examples):
        candidates = []
        for window in windows_of.get(index, []):
            starts, ends, offsets = start_logits[window], end_logits[window], offset_mapping[window]
            best_starts = np.argsort(starts)[-1:-n_best - 1:-1].tolist()
            best_ends = np.argsort(ends)[-1:-n_best - 1:-1].tolist()
            for s in best_starts:
                for e in best_ends:
                    if s >= len(offsets) or e >= len(offsets) or offsets[s] is None or offsets[e] is None:
                        continue  # padding, question or special token
                    if e < s or e - s + 1 > max_answer_length:
                        continue
                    candidates.append((starts[s] + ends[e], offsets[s][0], offsets[e][1]))
        ranked = sorted(candidates, key=lambda candidate: candidate[0], reverse=True)[:n_best]
        answers.append(example.context[ranked[0][1]:ranked[0][2]] if ranked else EMPTY)
    return answers


def clue_core_decode(examples: Sequence[SpanExample], features: encoding.Features, start: np.ndarray,
                     end: np.ndarray, mask_before_top_k: bool) -> list[str]:
    """What the learner runs: decode over the encoder's ragged lists, then slice each context."""
    decoded = decode_windows(start, end, features.offsets, features.context_ranges, N_BEST, MAX_ANSWER,
                             features.example_index, len(examples), mask_before_top_k)
    return [decoded.text(i, example.context) for i, example in enumerate(examples)]


def dense_decode(examples: Sequence[SpanExample], features: encoding.Features, start: np.ndarray,
                 end: np.ndarray) -> list[str]:
    """The dense path: copy every window's offsets and mask into dense arrays, then decode."""
    windows, width = start.shape
    offsets = np.zeros((windows, width, 2), dtype=np.int64)
    mask = np.zeros((windows, width), dtype=bool)
    for i, (row, inside) in enumerate(zip(features.offsets, features.context_mask)):
        offsets[i, : len(row)] = row
        mask[i, : len(inside)] = inside
    decoded = decode_spans(start, end, offsets, mask, N_BEST, MAX_ANSWER, np.asarray(features.example_index),
                           len(examples), mask_before_top_k=False)
    return [decoded.text(i, example.context) for i, example in enumerate(examples)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="300 questions, one repeat")
    args = parser.parse_args()
    n_questions, repeats = (300, 1) if args.quick else (3219, 3)

    started = time.perf_counter()
    examples = synthetic_examples(n_questions)
    tokenizer = tiny.build_tokenizer([HANZI, " ".join(LATIN), "0123456789？"])
    features = encoding.encode_spans(tokenizer, examples, MAX_LENGTH, DOC_STRIDE, MAX_QUERY, with_labels=False)
    start, end = synthetic_logits(features, MAX_LENGTH)
    # run_qa's preprocessing keeps offsets only for context tokens (None elsewhere)
    offset_mapping = [[o if inside else None for o, inside in zip(row, mask)]
                      for row, mask in zip(features.offsets, features.context_mask)]
    print(f"setup (examples, encoding, logits; not timed): {time.perf_counter() - started:.1f} s")

    baseline_time, expected = best_of(lambda: run_qa_postprocess(
        examples, features.example_index, offset_mapping, start, end, N_BEST, MAX_ANSWER), repeats)
    ours_time, ours = best_of(lambda: clue_core_decode(examples, features, start, end, False), repeats)
    dense_time, dense = best_of(lambda: dense_decode(examples, features, start, end), repeats)
    masked_time, masked = best_of(lambda: clue_core_decode(examples, features, start, end, True), repeats)

    no_answer = sum(answer == EMPTY for answer in expected)
    same = sum((a == b) or (a == EMPTY and b == "") for a, b in zip(expected, ours))
    differ = [i for i, (a, b) in enumerate(zip(expected, ours)) if not ((a == b) or (a == EMPTY and b == ""))]
    assert not differ, f"{len(differ)} answers differ from run_qa's, first at example {differ[:5]}"
    assert dense == ours, "the dense-array path disagrees with decode_windows"
    masked_changed = sum(a != b for a, b in zip(ours, masked))
    speedup = baseline_time / ours_time

    print(f"n-best span decoding: {n_questions} questions, {len(features)} windows of up to {MAX_LENGTH} tokens, "
          f"n-best {N_BEST}, max answer {MAX_ANSWER}, best of {repeats}")
    print(f"answers identical to run_qa's: {same}/{n_questions} ({no_answer} with no candidate: run_qa says "
          f"{EMPTY!r}, clue-core an empty string); mask-first default changes {masked_changed}")
    print()
    rows = [
        ("run_qa post-processing (baseline)", baseline_time),
        ("decode_windows, run_qa candidates", ours_time),
        ("decode_windows, mask first (default)", masked_time),
        ("decode_spans after dense copies", dense_time),
    ]
    print(f"{'implementation':<40}{'seconds':>10}{'speed-up':>10}")
    for name, seconds in rows:
        print(f"{name:<40}{seconds:>10.4f}{baseline_time / seconds:>9.1f}x")
    print()
    print(f"{'goal':<40}{'figure':>18}  result")
    print(f"{'identical answers':<40}{f'{same}/{n_questions}':>18}  {'met' if same == n_questions else 'MISSED'}")
    print(f"{'speed-up >= 5x':<40}{f'{speedup:.1f}x':>18}  {'met' if speedup >= 5 else 'MISSED'}")


if __name__ == "__main__":
    main()
