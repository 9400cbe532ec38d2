"""CLUENER2020's official score (``score.py``) and an offset-exact micro F1 beside it.

The official score, per type: for each line the SET of entity strings of that type (the label's dict
keys; offsets play no part), TP = predicted strings in the gold set, FP = the others, FN = gold strings
not predicted; P = TP/(TP+FP), R = TP/(TP+FN), F1 = 2PR/(P+R); the primary score is the unweighted mean
of the ten types' F1, summed in the scorer's type order and divided by 10. Floats are computed with
the scorer's own formula in its own order, so ``macro_f1`` is exactly ``avg * 100`` wherever
``score.py`` returns.

``score.py`` divides by zero for a type with TP = 0 (no gold and no prediction, or nothing right).
Here such a type's P, R and F1 are 0: the limit of F1 as TP -> 0, sklearn's ``zero_division=0``, and it
keeps the mean over the same ten types the leaderboard averages (leaving a type out, or counting it
as 1, would make a sample's score incomparable with the full dev's and reward predicting nothing).
On the full dev and test every type has gold, so the case only arises on small samples or for a
model that never finds a type, which then earns nothing for it.

The offset-exact micro scores are what NER papers (and the repository's pytorch baseline,
``SpanEntityScore``) report: ``(type, start, end)`` spans over all lines, a span right only where the
gold has the very same one; 0 where a denominator is 0. A prediction that lists a span twice counts
it once (the spans are a set, as the official strings are).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from clue_tasks_ner.examples import EntitySpansExample
from clue_tasks_ner.labels import TYPES

if TYPE_CHECKING:
    from clue_core.plugin import Prediction

#: Per type: [TP, FP, FN].
Counts = dict[str, list[int]]


def string_sets(text: str, spans: Iterable[Sequence[Any]]) -> dict[str, set[str]]:
    """``{type: {entity text}}`` of one line, as the official scorer sees its label's keys."""
    found: dict[str, set[str]] = {}
    for kind, start, end in spans:
        found.setdefault(kind, set()).add(text[start:end])
    return found


def official_counts(pairs: Iterable[tuple[dict[str, set[str]], dict[str, set[str]]]]) -> Counts:
    """TP/FP/FN per type over ``(predicted strings, gold strings)`` per line, as ``score.py`` counts."""
    counts: Counts = {kind: [0, 0, 0] for kind in TYPES}
    for predicted, gold in pairs:
        for kind in TYPES:
            pred, want = predicted.get(kind, set()), gold.get(kind, set())
            right = len(pred & want)
            counts[kind][0] += right
            counts[kind][1] += len(pred) - right
            counts[kind][2] += len(want) - right
    return counts


def prf(tp: int, fp: int, fn: int) -> tuple[float, float, float]:
    """Precision, recall, F1 as fractions with ``score.py``'s formula; all 0 where TP is 0 (see above)."""
    if tp == 0:
        return 0.0, 0.0, 0.0
    p = tp / (tp + fp)
    r = tp / (tp + fn)
    return p, r, 2 * p * r / (p + r)


def official_average(counts: Counts) -> tuple[float, dict[str, tuple[float, float, float]]]:
    """The official mean F1 (a fraction) and each type's (P, R, F1), summed in ``score.py``'s order."""
    per_type = {kind: prf(*counts[kind]) for kind in TYPES}
    total: float = 0
    for kind in TYPES:
        total += per_type[kind][2]
    return total / len(TYPES), per_type


def compute(examples: Sequence[EntitySpansExample], predictions: Sequence[Prediction | None]) -> dict[str, float]:
    """The official macro F1 (primary), each type's P/R/F1 and the offset-exact micro P/R/F1, ×100.

    Only examples with gold count; a missing prediction (None) predicts no entity.
    """
    pairs = []
    gold_spans = predicted_spans = correct = 0
    for example, prediction in zip(examples, predictions):
        if example.entities is None:
            continue
        value = [] if prediction is None or prediction.value is None else prediction.value
        spans = {(kind, start, end) for kind, start, end in value}
        gold = set(example.entities)
        pairs.append((string_sets(example.text, spans), string_sets(example.text, gold)))
        gold_spans += len(gold)
        predicted_spans += len(spans)
        correct += len(spans & gold)
    average, per_type = official_average(official_counts(pairs))
    precision = correct / predicted_spans if predicted_spans else 0.0
    recall = correct / gold_spans if gold_spans else 0.0
    totals = {  # the two headline scores first: a table of the totals shows them before the 30 per-type ones
        "macro_f1": average * 100,
        "micro_precision_exact": precision * 100,
        "micro_recall_exact": recall * 100,
        "micro_f1_exact": 2 * precision * recall / (precision + recall) * 100 if correct else 0.0,
    }
    for kind, (p, r, f) in per_type.items():
        totals[f"precision_{kind}"] = p * 100
        totals[f"recall_{kind}"] = r * 100
        totals[f"f1_{kind}"] = f * 100
    return totals
