"""How far judges agree: Krippendorff's α, Fleiss' κ, position consistency and bootstrap intervals.

Pure Python (no numpy or scipy: the metric runs wherever the task does), each formula written
out here and checked in ``tests/superclue/test_agreement.py`` against the textbook examples it
is usually taught with. Each function returns ``None`` where its coefficient is undefined
(nothing to compare, or no variation to compare against): a run record refuses NaN, and an
undefined agreement is not a number at all, so callers leave it out and say why.

**Krippendorff's α** (Krippendorff 2011, *Computing Krippendorff's Alpha-Reliability*), for
units ``u`` (questions) each given values by some of the coders (judges), missing values
allowed. Only *pairable* units, with ``m_u ≥ 2`` values, count; ``n = Σ m_u``::

    D_o = 1/n · Σ_u 1/(m_u − 1) · Σ_{i ≠ j in u} δ(v_ui, v_uj)        (observed disagreement)
    D_e = 1/(n(n − 1)) · Σ_{c ≠ k over all n values} δ(v_c, v_k)      (expected disagreement)
    α   = 1 − D_o / D_e

with ``δ(a, b) = (a − b)²`` for the interval metric (grades 1–10 are a scale) and
``δ(a, b) = [a ≠ b]`` for the nominal one. α = 1 is perfect agreement, 0 agreement at chance;
undefined when ``D_e = 0`` (every value the same) or nothing is pairable.

**Fleiss' κ** (Fleiss 1971, *Measuring nominal scale agreement among many raters*), for N
subjects each rated by the same n ≥ 2 raters into k categories, ``n_ij`` raters putting
subject i in category j::

    P_i = (Σ_j n_ij² − n) / (n(n − 1))     P̄ = 1/N · Σ_i P_i
    p_j = Σ_i n_ij / (N n)                 P̄_e = Σ_j p_j²
    κ   = (P̄ − P̄_e) / (1 − P̄_e)

undefined when ``P̄_e = 1`` (every rating in one category) or there is no subject.

**Position consistency** (Zheng et al. 2023, *Judging LLM-as-a-judge*; Wang et al. 2023, *Large
language models are not fair evaluators*): the pairwise judge sees each pair twice, the answers
swapped; the share of pairs whose winner (model, reference or tie, named by answer, not by
position) is the same in both orders.

**Bootstrap intervals** (Efron & Tibshirani 1993, ch. 13, the percentile interval): resample
the items with replacement ``resamples`` times with a seeded :class:`random.Random`, compute the
statistic on each resample, and take the ``(1 − level)/2`` and ``(1 + level)/2`` quantiles
(linear interpolation between order statistics, numpy's default). The same seed gives the same
interval on every machine and Python version (``random.Random`` is specified to).
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Any, TypeVar

Item = TypeVar("Item")
Value = TypeVar("Value", bound=Hashable)


def interval_distance(a: float, b: float) -> float:
    """Krippendorff's interval metric: the squared difference."""
    return (float(a) - float(b)) ** 2


def nominal_distance(a: Hashable, b: Hashable) -> float:
    """Krippendorff's nominal metric: 0 for the same category, 1 otherwise."""
    return 0.0 if a == b else 1.0


def krippendorff_alpha(units: Iterable[Sequence[Any]], distance: Callable[[Any, Any], float] = interval_distance
                       ) -> float | None:
    """α over ``units``: each the values its coders gave (``None`` for a coder who gave none).

    Computed from value counts (``D_e`` sums over distinct values, weighted by how often each
    occurs), so thousands of questions cost no more than their distinct grades.
    """
    pairable = [[v for v in unit if v is not None] for unit in units]
    pairable = [values for values in pairable if len(values) >= 2]
    n = sum(len(values) for values in pairable)
    if n < 2:
        return None
    observed = 0.0
    for values in pairable:
        counts = Counter(values)
        within = sum(ca * cb * distance(a, b) for a, ca in counts.items() for b, cb in counts.items() if a != b)
        observed += within / (len(values) - 1)
    observed /= n
    totals = Counter(v for values in pairable for v in values)
    expected = sum(ca * cb * distance(a, b) for a, ca in totals.items() for b, cb in totals.items() if a != b)
    expected /= n * (n - 1)
    if expected <= 0:
        return None
    return 1.0 - observed / expected


def fleiss_kappa(table: Sequence[Sequence[int]]) -> float | None:
    """κ over ``table``: one row per subject, one count per category (``n_ij``), every row summing to n ≥ 2."""
    rows = [list(map(int, row)) for row in table]
    if not rows:
        return None
    raters = sum(rows[0])
    if raters < 2 or any(sum(row) != raters for row in rows):
        raise ValueError(f"Fleiss' kappa needs the same number (≥ 2) of ratings per subject, got "
                         f"{sorted({sum(row) for row in rows})}")
    subjects = len(rows)
    agreement = sum((sum(c * c for c in row) - raters) / (raters * (raters - 1)) for row in rows) / subjects
    shares = [sum(row[j] for row in rows) / (subjects * raters) for j in range(len(rows[0]))]
    chance = sum(p * p for p in shares)
    if chance >= 1.0 - 1e-12:
        return None
    return (agreement - chance) / (1.0 - chance)


def category_table(ratings: Iterable[Sequence[Value]], categories: Sequence[Value]) -> list[list[int]]:
    """Fleiss' table from each subject's ratings (its raters' categories)."""
    table = []
    for subject in ratings:
        counts = Counter(subject)
        strays = set(counts) - set(categories)
        if strays:
            raise ValueError(f"ratings {sorted(map(str, strays))} are not among the categories {list(categories)}")
        table.append([counts.get(category, 0) for category in categories])
    return table


def position_consistency(pairs: Iterable[tuple[str | None, str | None]]) -> float | None:
    """The share (0–1) of pairs whose two orders name the same winner; pairs with an unparsed order are left out."""
    decided = [(first, second) for first, second in pairs if first is not None and second is not None]
    if not decided:
        return None
    return sum(first == second for first, second in decided) / len(decided)


def quantile(ordered: Sequence[float], q: float) -> float:
    """The ``q`` quantile of sorted values, interpolating linearly between order statistics."""
    if not ordered:
        raise ValueError("no values")
    position = q * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def bootstrap_interval(items: Sequence[Item], statistic: Callable[[Sequence[Item]], float | None], *,
                       seed: int = 0, resamples: int = 2000, level: float = 0.95) -> tuple[float, float] | None:
    """The percentile bootstrap interval of ``statistic`` over ``items``, reproducible for ``seed``.

    A resample on which the statistic is undefined (``None``: a κ of one category) is left out;
    ``None`` when no resample gives a value, or there are no items.
    """
    if not items or resamples < 1 or not 0 < level < 1:
        return None
    rng = random.Random(seed)
    size = len(items)
    found = []
    for _ in range(resamples):
        value = statistic([items[rng.randrange(size)] for _ in range(size)])
        if value is not None and math.isfinite(value):
            found.append(float(value))
    if not found:
        return None
    found.sort()
    return quantile(found, (1 - level) / 2), quantile(found, (1 + level) / 2)


def share_interval(flags: Sequence[bool], *, seed: int = 0, resamples: int = 2000,
                   level: float = 0.95) -> list[float] | None:
    """The bootstrap interval of a percentage (the share of ``True``), rounded to 2 decimals, as JSON wants it.

    The judge-agreement sheet's ``acceptable_share`` is such a share: one flag per graded row.
    """
    found = bootstrap_interval(list(flags), lambda sample: 100.0 * sum(sample) / len(sample), seed=seed,
                               resamples=resamples, level=level)
    return None if found is None else [round(found[0], 2), round(found[1], 2)]


def sheet_agreement(rows: Sequence[tuple[float | None, str]], *, seed: int = 0, resamples: int = 2000
                    ) -> dict[str, Any]:
    """The judge-agreement sheet's figures with seeded bootstrap 95 % intervals, for ``judge_agreement``.

    ``rows`` are the graded rows: the judge's grade (1–10, a panel's may be fractional; None
    when unknown) and the band the person chose (:data:`clue_tasks_superclue.panel.BANDS`).
    Returns ``acceptable_interval`` (of ``acceptable_share``, the share banded 及格 or better),
    and over the rows with a judge grade ``band_agreement`` (% whose judge grade falls in the
    person's band) with ``band_agreement_interval``, and ``band_alpha`` (Krippendorff's α,
    interval metric on the band ranks 0–3, judge against person) with ``band_alpha_interval``;
    a figure that is undefined is left out (never NaN). Intervals resample the rows, one seed.
    """
    from clue_tasks_superclue.panel import BANDS, band_of

    rank = {name: index for index, (name, _) in enumerate(BANDS)}
    out: dict[str, Any] = {}
    acceptable = share_interval([rank[band] <= rank["及格"] for _, band in rows], seed=seed, resamples=resamples)
    if acceptable is not None:
        out["acceptable_interval"] = acceptable
    pairs = [(rank[band_of(grade)], rank[band]) for grade, band in rows if grade is not None]
    if not pairs:
        return out
    out["band_agreement"] = round(100.0 * sum(a == b for a, b in pairs) / len(pairs), 2)
    out["band_agreement_interval"] = share_interval([a == b for a, b in pairs], seed=seed, resamples=resamples)
    alpha = krippendorff_alpha(pairs)
    if alpha is not None:
        out["band_alpha"] = round(alpha, 4)
        found = bootstrap_interval(pairs, krippendorff_alpha, seed=seed, resamples=resamples)
        if found is not None:
            out["band_alpha_interval"] = [round(found[0], 4), round(found[1], 4)]
    return out
