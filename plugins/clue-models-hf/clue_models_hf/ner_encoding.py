"""Entity-spans examples → token windows with labels, and the heads' outputs → predicted spans.

A text longer than ``max_length`` tokens is cut into windows by the tokenizer itself
(``return_overflowing_tokens`` with ``stride``: consecutive windows share ``ner_stride``
tokens), so every token of the text is seen, the first and last ones by one window, those in
the overlaps by two. The windows' token labels are merged (each token from the window where it
has most context: :func:`clue_models_hf.ner_tags.merge_windows`) and decoded once, so an entity
in an overlap is found once and one cut by a window edge comes back whole. Token labels and decoding are in
:mod:`clue_models_hf.ner_tags`; this module only drives the tokenizer and the arrays.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from clue_core.plugin import ClueError
from clue_models_hf.encoding import Features, uses_token_types
from clue_models_hf.ner_tags import BIO, Offset, Span, decode_bio, decode_span_head, encode, merge_windows


def entities_of(example: Any) -> tuple[Span, ...]:
    """The example's gold spans as plain triples (the contract's ``entities`` field; None: none)."""
    return tuple((str(t), int(s), int(e)) for t, s, e in (getattr(example, "entities", None) or ()))


def check_stride(tokenizer: Any, max_length: int, stride: int) -> None:
    room = max_length - tokenizer.num_special_tokens_to_add(pair=False)
    if room <= 0 or stride >= room:
        raise ClueError(f"ner_stride ({stride}) must be smaller than max_length - special tokens "
                        f"({max_length} - {tokenizer.num_special_tokens_to_add(pair=False)} = {room})")


def encode_entities(tokenizer: Any, examples: Sequence[Any], types: Sequence[str], max_length: int, stride: int,
                    with_labels: bool) -> Features:
    """One feature per window; ``offsets`` per window with None on special tokens (``context_mask``
    marks the text tokens) and ``example_index`` its example. With labels, items carry ``tags``
    (BIO) and ``start_tags`` / ``end_tags`` (span head), :data:`~clue_models_hf.ner_tags.IGNORE` on
    special tokens."""
    check_stride(tokenizer, max_length, stride)
    if not getattr(tokenizer, "is_fast", False):
        raise ClueError("entity spans need a fast tokenizer with character offsets (offset_mapping)")
    features = Features([], [], [])
    if not examples:
        return features
    known = set(types)
    if with_labels:
        for example in examples:
            unknown = sorted({t for t, _, _ in entities_of(example)} - known)
            if unknown:
                raise ClueError(f"example {example.id!r}: entity types {', '.join(map(repr, unknown))} are not "
                                f"among the model's types ({', '.join(types)})")
    token_types = uses_token_types(tokenizer)
    encoding = tokenizer([example.text for example in examples], truncation=True, max_length=max_length,
                         stride=stride, return_overflowing_tokens=True, return_offsets_mapping=True,
                         return_attention_mask=False, return_token_type_ids=token_types)
    owners = list(encoding["overflow_to_sample_mapping"])
    placed: dict[int, set[Span]] = {}
    unaligned: set[tuple[int, Span]] = set()
    overlapping: set[tuple[int, Span]] = set()
    for w, owner in enumerate(owners):
        sequence = encoding.sequence_ids(w)
        offsets: list[Offset] = [tuple(o) if s == 0 else None  # type: ignore[misc]
                                 for o, s in zip(encoding["offset_mapping"][w], sequence)]
        item: dict[str, Any] = {"input_ids": encoding["input_ids"][w]}
        if token_types and "token_type_ids" in encoding:
            item["token_type_ids"] = encoding["token_type_ids"][w]
        if with_labels:
            gold = encode(offsets, entities_of(examples[owner]), types)
            item["tags"], item["start_tags"], item["end_tags"] = gold.tags, gold.starts, gold.ends
            placed.setdefault(owner, set()).update(gold.placed)
            unaligned.update((owner, s) for s in gold.unaligned)
            overlapping.update((owner, s) for s in gold.overlapping)
        features.items.append(item)
        features.lengths.append(len(item["input_ids"]))
        features.example_index.append(int(owner))
        features.offsets.append(offsets)  # type: ignore[arg-type]
        features.context_mask.append([o is not None for o in offsets])
    if with_labels:
        _notes(features, examples, placed, unaligned, overlapping)
    return features


def _notes(features: Features, examples: Sequence[Any], placed: dict[int, set[Span]],
           unaligned: set[tuple[int, Span]], overlapping: set[tuple[int, Span]]) -> None:
    total = sum(len(entities_of(e)) for e in examples)
    lost = total - sum(len(spans) for spans in placed.values())
    if unaligned:
        features.notes.append(f"{len(unaligned)} of {total} gold spans start or end inside a token; trained on "
                              f"the tokens they overlap")
    if overlapping:
        features.notes.append(f"{len(overlapping)} of {total} gold spans overlap an earlier one; BIO tags keep the "
                              f"first (the span head both, unless they share a start or an end token)")
    if lost:
        features.notes.append(f"{lost} of {total} gold spans cover only characters the tokenizer drops; not "
                              f"trained on")


def decode_outputs(head: str, types: Sequence[str], features: Features, outputs: Sequence[tuple[np.ndarray, ...]],
                   num_examples: int) -> list[list[Span]]:
    """Per example, its spans: each window's arg-max labels, the windows merged token by token
    (:func:`~clue_models_hf.ner_tags.merge_windows`), then decoded once over the whole text."""
    windows: list[list[tuple[Sequence[Offset], list[list[int]]]]] = [[] for _ in range(num_examples)]
    for f, output in enumerate(outputs):
        n = features.lengths[f]
        rows = [scores[:n].argmax(axis=-1).tolist() for scores in output]
        windows[features.example_index[f]].append((features.offsets[f], rows))  # type: ignore[arg-type]
    return [decode(head, types, *merge_windows(found)) for found in windows]


def decode(head: str, types: Sequence[str], offsets: Sequence[Offset], rows: Sequence[Sequence[int]]) -> list[Span]:
    """The spans of one text's merged labels, in the contract's order (start, end, type)."""
    if not rows:
        return []
    spans = decode_bio(rows[0], offsets, types) if head == BIO else decode_span_head(rows[0], rows[1], offsets, types)
    return sorted(spans, key=lambda s: (s[1], s[2], s[0]))
