"""Exact and near-duplicate examples within and across train and dev.

Exact: the same text (and text pair) after stripping surrounding whitespace; a group whose
labels differ is flagged (the same input with two labels is a label error by definition).
Near: character n-gram sets (n = 3 by default, texts shorter than n count as one gram) whose
Jaccard similarity reaches the threshold, found exactly with prefix filtering (Chaudhuri et al.,
2006: two sets with J ≥ t share a gram among the first |A| − ⌈t·|A|⌉ + 1 of each in a fixed
rare-first order), so 12,000 examples take seconds, not the 72 million pairs of a full scan.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Sequence


def key(text: str, pair: str | None) -> str:
    return text.strip() + ("\t" + pair.strip() if pair is not None else "")


def exact_groups(keys: Sequence[str]) -> list[list[int]]:
    """Indices sharing one key, groups of two or more, in order of first appearance."""
    by_key: dict[str, list[int]] = defaultdict(list)
    for index, value in enumerate(keys):
        by_key[value].append(index)
    return [group for group in by_key.values() if len(group) > 1]


def grams(text: str, n: int) -> frozenset[str]:
    return frozenset(text[i:i + n] for i in range(max(1, len(text) - n + 1)))


def near_pairs(keys: Sequence[str], threshold: float, n: int = 3) -> list[tuple[int, int, float]]:
    """``(i, j, jaccard)`` for i < j with different keys and Jaccard ≥ ``threshold``, sorted by (−J, i, j)."""
    sets = [grams(k, n) for k in keys]
    frequency = Counter(g for s in sets for g in s)
    ordered = [sorted(s, key=lambda g: (frequency[g], g)) for s in sets]
    index: dict[str, list[int]] = defaultdict(list)
    found: list[tuple[int, int, float]] = []
    for i, tokens in enumerate(ordered):
        size = len(tokens)
        prefix = size - math.ceil(threshold * size) + 1
        candidates: set[int] = set()
        for gram in tokens[:prefix]:
            candidates.update(index[gram])
            index[gram].append(i)
        for j in candidates:
            if keys[i] == keys[j] or not (threshold * size <= len(sets[j]) <= size / threshold):
                continue
            shared = len(sets[i] & sets[j])
            similarity = shared / (size + len(sets[j]) - shared)
            if similarity >= threshold:
                found.append((j, i, similarity))
    found.sort(key=lambda p: (-p[2], p[0], p[1]))
    return found
