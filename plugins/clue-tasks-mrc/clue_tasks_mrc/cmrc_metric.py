"""The official CMRC2018 EM and F1, used by CMRC2018 and DRCD.

Every quirk of the official ``cmrc2018_evaluate.py`` is kept on purpose, because the
leaderboard numbers come from it:

* strings are normalised with ``str(s).lower().strip()``;
* the punctuation set is compared one character at a time, so its two-character entry
  ``……`` never matches and ``‘`` (absent from the set) is kept while ``’`` is dropped;
* F1 tokens come from "mixed segmentation": each character in U+4E00–U+9FA5 is a token,
  every other run of characters goes through NLTK's ``word_tokenize``, punctuation
  characters are skipped *without* ending the run (``"ab-cd"`` is one token ``abcd``);
* F1 per gold answer uses the longest common *contiguous* token run, not a bag of
  tokens; EM compares the strings with the punctuation characters deleted (inner
  spaces count);
* per question the best gold answer counts; a missing prediction scores 0 and still
  counts in the total; both are reported ×100, with their mean as ``average``.

What differs is only the speed: segmentation is computed once per distinct string
instead of once per (gold answer, prediction) pair, and the longest common run uses
one row of the dynamic programme instead of a full matrix.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence

from clue_core.plugin import DataError, MetricResult, Prediction, SpanExample
from clue_tasks_mrc.word_tokens import word_tokenize

#: The official script's ``sp_char`` list, one entry per element (``……`` included).
OFFICIAL_PUNCTUATION = (
    "-", ":", "_", "*", "^", "/", "\\", "~", "`", "+", "=",
    "，", "。", "：", "？", "！", "“", "”", "；", "’", "《", "》", "……", "·", "、",
    "「", "」", "（", "）", "－", "～", "『", "』",
)  # fmt: skip
# Membership is tested per character, so only the one-character entries can ever match.
PUNCTUATION_CHARS = frozenset(entry for entry in OFFICIAL_PUNCTUATION if len(entry) == 1)
_REMOVE_PUNCTUATION = str.maketrans(dict.fromkeys(PUNCTUATION_CHARS))


def normalize(text: object) -> str:
    """The official first step: ``str(s).lower().strip()``."""
    return str(text).lower().strip()


def is_cjk(char: str) -> bool:
    """The official ``[\\u4e00-\\u9fa5]`` test (not the whole CJK block: U+9FA6.. are not)."""
    return "\u4e00" <= char <= "\u9fa5"


@functools.lru_cache(maxsize=131072)
def mixed_segmentation(text: str) -> tuple[str, ...]:
    """Official F1 tokens of ``text`` (normalised here; punctuation removed)."""
    tokens: list[str] = []
    pending: list[str] = []
    for char in normalize(text):
        if char in PUNCTUATION_CHARS:
            continue  # skipped without flushing: the run goes on across it
        if is_cjk(char):
            if pending:
                tokens.extend(word_tokenize("".join(pending)))
                pending = []
            tokens.append(char)
        else:
            pending.append(char)
    if pending:
        tokens.extend(word_tokenize("".join(pending)))
    return tuple(tokens)


@functools.lru_cache(maxsize=131072)
def remove_punctuation(text: str) -> str:
    """Official EM form: normalised, every punctuation character deleted."""
    return normalize(text).translate(_REMOVE_PUNCTUATION)


def longest_common_run(first: Sequence[str], second: Sequence[str]) -> int:
    """Length of the longest common contiguous run of tokens (the official ``find_lcs``)."""
    if not first or not second:
        return 0
    best = 0
    previous = [0] * (len(second) + 1)
    for token in first:
        current = [0] * (len(second) + 1)
        for j, other in enumerate(second):
            if token == other:
                run = previous[j] + 1
                current[j + 1] = run
                if run > best:
                    best = run
        previous = current
    return best


def f1_score(golds: Iterable[str], prediction: str) -> float:
    """Best F1 (0–1) of ``prediction`` against the gold answers."""
    prediction_tokens = mixed_segmentation(str(prediction))
    best = 0.0
    for gold in golds:
        gold_tokens = mixed_segmentation(str(gold))
        common = longest_common_run(gold_tokens, prediction_tokens)
        if common == 0:
            continue
        precision = common / len(prediction_tokens)
        recall = common / len(gold_tokens)
        best = max(best, 2 * precision * recall / (precision + recall))
    return best


def exact_match(golds: Iterable[str], prediction: str) -> float:
    """1.0 when the prediction equals any gold answer after punctuation removal."""
    predicted = remove_punctuation(str(prediction))
    return 1.0 if any(remove_punctuation(str(gold)) == predicted for gold in golds) else 0.0


def question_scores(
    golds_per_question: Sequence[Sequence[str]], predictions: Sequence[str | None]
) -> tuple[list[float], list[float]]:
    """Each question's EM and F1 (0–1); ``None`` marks a missing prediction (scores 0)."""
    if len(golds_per_question) != len(predictions):
        raise ValueError(f"{len(golds_per_question)} questions but {len(predictions)} predictions")
    em = [0.0 if p is None else exact_match(golds, p) for golds, p in zip(golds_per_question, predictions)]
    f1 = [0.0 if p is None else f1_score(golds, p) for golds, p in zip(golds_per_question, predictions)]
    return em, f1


def _totals(em: Sequence[float], f1: Sequence[float]) -> dict[str, float]:
    if not em:
        return {"em": 0.0, "f1": 0.0, "average": 0.0}
    # summed in question order from 0.0, exactly as the official script accumulates them
    em_score, f1_score_ = 100.0 * sum(em, 0.0) / len(em), 100.0 * sum(f1, 0.0) / len(f1)
    return {"em": em_score, "f1": f1_score_, "average": (em_score + f1_score_) / 2}


def score(golds_per_question: Sequence[Sequence[str]], predictions: Sequence[str | None]) -> dict[str, float]:
    """Corpus EM / F1 / average (×100); ``None`` marks a missing prediction (scores 0)."""
    return _totals(*question_scores(golds_per_question, predictions))


def compute(examples: Sequence[SpanExample], predictions: Sequence[Prediction | None]) -> MetricResult:
    """MetricSpec entry point: span examples with gold answers, aligned predictions.

    Totals are :func:`score`'s; ``per_example`` holds each question's EM, F1 and their
    mean on the same ×100 scale (0 for a missing prediction), so their means are the
    totals. Gold answers are compared by text only: an answer without an offset counts.
    """
    golds_per_question: list[list[str]] = []
    for example in examples:
        if not example.answers:
            raise DataError(
                f"question {example.id} has no gold answers: test files carry placeholders and cannot be scored"
            )
        golds_per_question.append([text for text, _start in example.answers])
    texts = [None if prediction is None else str(prediction.value) for prediction in predictions]
    em, f1 = question_scores(golds_per_question, texts)
    per_em = [100.0 * value for value in em]
    per_f1 = [100.0 * value for value in f1]
    per_average = [(e + f) / 2 for e, f in zip(per_em, per_f1)]
    return MetricResult(_totals(em, f1), {"em": per_em, "f1": per_f1, "average": per_average})
