"""KgCLUE's official metric, ``baselines/evaluate_f1_em.py``, reproduced exactly (without pylcs).

Per line, prediction and gold are split into subject, predicate and object on ``' ||| '`` and each
part normalised (``' '.join(text.lower().split())``: lower-cased, Unicode whitespace, U+00A0
included, collapsed). Then, summed over lines in order and divided by the number of **gold** lines:

* ``em_s``, ``em_p``, ``em_o``: the part equals the gold part; ``em_all``: all three do;
* ``f1_s``, ``f1_p``, ``f1_o``: ``2·LCS(a, b) / (len(a) + len(b))``, LCS the longest common
  *subsequence* (what ``pylcs.lcs`` computes), and 0 when both parts are empty (while their EM is 1);
  ``f1_all``: the same over the three parts concatenated with no separator;
* ``emf1``, the primary score: ``0.5·em_o + 0.5·f1_o``, from the unrounded fractions.

Everything is ×100; the official script then formats ``'%.3f'``, which these floats give exactly.

Where this differs from the script, it is where the script stops: an answer that does not split into
three parts (``""``, ``"a|||b|||c"``, four parts) raises there; here it is scored as three empty, so
wrong, parts and counted in ``malformed``. A missing prediction scores 0, as a gold line past the end of
a short prediction file does there. Lines pair by example (the kernel lines predictions up by id), not
by position in a file.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from clue_core.plugin import Example, MetricResult, Prediction
from clue_tasks_kgclue.triples import split_answer

#: The totals, in the order the official script's dict holds them, then this plugin's count.
PARTS = ("all", "s", "p", "o")
TOTALS = (*(f"em_{p}" for p in PARTS), *(f"f1_{p}" for p in PARTS), "emf1")
MALFORMED = "malformed"
_EMPTY = ("", "", "")


def normalize(text: str) -> str:
    """The official ``normalize``: lower-case, whitespace runs (any Unicode whitespace) to one space."""
    return " ".join(text.lower().split())


def lcs(a: str, b: str) -> int:
    """Length of the longest common subsequence of two strings (``pylcs.lcs``), by code point."""
    if not a or not b:
        return 0
    if len(a) < len(b):
        a, b = b, a
    previous = [0] * (len(b) + 1)
    for char in a:
        current = [0]
        for j, other in enumerate(b):
            current.append(previous[j] + 1 if char == other else max(previous[j + 1], current[j]))
        previous = current
    return previous[-1]


def f1_sim(a: str, b: str) -> float:
    """The official ``f1_sim``: 0.0 for two empty strings, else 2·LCS / (len(a) + len(b))."""
    if not a and not b:
        return 0.0
    return 2.0 * lcs(a, b) / (len(a) + len(b))


def score_line(predicted: tuple[str, str, str], gold: tuple[str, str, str]) -> dict[str, float]:
    """One line's EM and F1 sums (before dividing), for normalised parts."""
    line = {f"em_{p}": float(a == b) for p, a, b in zip(PARTS[1:], predicted, gold)}
    line["em_all"] = float(tuple(predicted) == tuple(gold))
    line.update({f"f1_{p}": f1_sim(a, b) for p, a, b in zip(PARTS[1:], predicted, gold)})
    line["f1_all"] = f1_sim("".join(predicted), "".join(gold))
    return line


def parse_prediction(value: Any) -> tuple[tuple[str, str, str], bool]:
    """``(normalised parts, malformed)``; a missing or unsplittable answer is three empty parts."""
    parts = split_answer(value) if isinstance(value, str) else None
    if parts is None:
        return _EMPTY, value is not None
    return (normalize(parts[0]), normalize(parts[1]), normalize(parts[2])), False


def compute(examples: Sequence[Example], predictions: Sequence[Prediction | None]) -> MetricResult:
    """The official totals over the examples with gold, ×100, with ``malformed`` and per-example values."""
    sums = dict.fromkeys(TOTALS[:-1], 0.0)
    per_example: dict[str, list[float | None]] = {name: [] for name in TOTALS}
    malformed = 0
    gold_lines = 0
    for example, prediction in zip(examples, predictions):
        answer = getattr(example, "answer", None)
        if answer is None:
            for values in per_example.values():
                values.append(None)
            continue
        gold_lines += 1
        parts, bad = parse_prediction(None if prediction is None else prediction.value)
        malformed += bad
        line = score_line(parts, tuple(normalize(part) for part in answer))  # type: ignore[arg-type]
        for name in TOTALS[:-1]:
            sums[name] += line[name]  # summed in file order, as the script does
            per_example[name].append(100.0 * line[name])
        per_example["emf1"].append(100.0 * (0.5 * line["em_o"] + 0.5 * line["f1_o"]))
    if not gold_lines:
        return MetricResult({})
    fractions = {name: value / gold_lines for name, value in sums.items()}
    fractions["emf1"] = fractions["em_o"] * 0.50 + fractions["f1_o"] * 0.50
    totals = {name: fractions[name] * 100 for name in TOTALS}
    totals[MALFORMED] = float(malformed)
    return MetricResult(totals, per_example=per_example)


def official_strings(totals: dict[str, float]) -> dict[str, str]:
    """The totals as the official script returns them: its key names, ``'%.3f'`` of the ×100 value."""
    names = {f"{kind}_{part}": f"{kind.upper()}_{part.upper() if part != 'all' else 'All'}"
             for kind in ("em", "f1") for part in PARTS}
    names["emf1"] = "EMF1"
    return {names[name]: f"{totals[name]:.3f}" for name in TOTALS}  # the script's '%.3f' %

