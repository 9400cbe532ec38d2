"""Agreement of the models' totals with a human ranking (an Elo board, votes): Pearson and Spearman.

The file maps model name → human score, as JSON (``{"model": 1210.5, …}``) or as CSV with
the header ``model,score``. The coefficients are computed here (Spearman on average ranks,
so ties are handled); their two-sided p-values come from scipy (this plugin's ``compare`` extra),
imported only when ``--human`` is given.

A human score is any finite number, ±1e308 included: the coefficients do not depend on the
scores' scale, so each series is first multiplied by the power of two that brings its largest
magnitude near 1 (exact: only the exponent changes), where squaring the deviations no longer
overflows. A number no float holds (an integer of 400 digits) is refused, naming file and field.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from clue_core.plugin import ClueError
from clue_tasks_superclue.compare.tables import csv_rows, read_text

MIN_MODELS = 3
CSV_HEADER = ["model", "score"]
#: What installs scipy: this plugin's ``compare`` extra.
EXTRA = "./plugins/clue-tasks-superclue[compare]"


def _number(value: Any, where: str) -> float:
    """A score as a finite float, or one line naming ``where``."""
    if isinstance(value, int) and not isinstance(value, bool):
        try:
            return float(value)
        except OverflowError:
            raise ClueError(f"{where}: expected a finite number, got an integer of {len(str(abs(value)))} "
                            "digits") from None
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            raise ClueError(f"{where}: expected a number, got {value!r}") from None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ClueError(f"{where}: expected a finite number, got {value!r}")
    return float(value)


def _from_csv(path: Path, text: str) -> dict[str, float]:
    scores: dict[str, float] = {}
    header = None
    for start, row in csv_rows(path, text):
        if header is None:
            header = [cell.strip() for cell in row]
            if header != CSV_HEADER:
                raise ClueError(f"{path}:{start}: expected the header 'model,score', got {','.join(row)!r}")
            continue
        if len(row) != 2:
            raise ClueError(f"{path}:{start}: expected 2 columns (model, score), got {len(row)}")
        name = row[0].strip()
        if not name:
            raise ClueError(f"{path}:{start}: column 1 (model): empty")
        if name in scores:
            raise ClueError(f"{path}:{start}: column 1 (model): {name!r} is listed twice")
        scores[name] = _number(row[1], f"{path}:{start}: column 2 (score)")
    if header is None:
        raise ClueError(f"{path}: empty (expected the header 'model,score' and one row per model)")
    return scores


def read_human(path: Path) -> dict[str, float]:
    """Model name → human score, read strictly (JSON object, or CSV ``model,score``)."""
    text = read_text(path)
    if path.suffix.lower() == ".json":
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise ClueError(f"{path}: invalid JSON ({exc})") from None
        if not isinstance(data, dict) or not data:
            raise ClueError(f"{path}: expected a JSON object mapping model name to human score")
        return {name: _number(value, f"{path}: field {name!r}") for name, value in data.items()}
    if path.suffix.lower() != ".csv":
        raise ClueError(f"{path}: expected a .json or .csv file")
    return _from_csv(path, text)


def ranks(values: Sequence[float]) -> list[float]:
    """1-based ranks, ties sharing the mean of the ranks they span."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    result = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            result[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return result


def scaled(values: Sequence[float]) -> list[float]:
    """``values`` times the power of two that brings the largest magnitude into [0.5, 1): the same
    correlations, no overflow in the squares of ±1e308, no precision lost from subnormals."""
    largest = max((abs(v) for v in values), default=0.0)
    if largest == 0:
        return [float(v) for v in values]
    _, exponent = math.frexp(largest)
    return [math.ldexp(v, -exponent) for v in values]


def pearson(x: Sequence[float], y: Sequence[float]) -> float:
    """Pearson's r, computed on the scaled series (see :func:`scaled`)."""
    x, y = scaled(x), scaled(y)
    mx, my = sum(x) / len(x), sum(y) / len(y)
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y))
    sxx, syy = sum((a - mx) ** 2 for a in x), sum((b - my) ** 2 for b in y)
    return sxy / math.sqrt(sxx * syy)


def _p_values(x: Sequence[float], y: Sequence[float]) -> tuple[float, float]:
    try:
        from scipy import stats
    except ImportError:
        raise ClueError(f"--human needs scipy for the p-values: pip install '{EXTRA}'") from None
    return float(stats.pearsonr(x, y).pvalue), float(stats.spearmanr(x, y).pvalue)


def _names(names: Sequence[str], most: int = 6) -> str:
    return ", ".join(names[:most]) + (f", … ({len(names)} in all)" if len(names) > most else "")


def _unmatched(human: Mapping[str, float], totals: Mapping[str, float]) -> str:
    """The names on either side that found no partner, so a spelling difference is visible at once."""
    only_file = [name for name in human if name not in totals]
    only_compared = [name for name in totals if name not in human]
    if not only_file and not only_compared:
        return ""
    parts = ([f"names in the file: {_names(only_file)}"] if only_file else []) + (
        [f"compared models: {_names(only_compared)}"] if only_compared else [])
    return f" (unmatched {'; '.join(parts)})"


def human_ranking(path: Path, totals: Mapping[str, float]) -> tuple[dict[str, Any], list[str]]:
    """``human_ranking`` for comparison.json, and warnings for models not in both."""
    human = read_human(path)
    common = [name for name in totals if name in human]
    warnings = [f"{path}: {name} has a human score but is not among the compared models"
                for name in human if name not in totals]
    warnings += [f"{path}: no human score for {name}; left out of the correlation"
                 for name in totals if name not in human]
    if len(common) < MIN_MODELS:
        unmatched = _unmatched(human, totals)
        raise ClueError(f"{path}: {len(common)} model(s) both compared and in the human ranking; "
                        f"a correlation needs at least {MIN_MODELS}{unmatched}")
    x, y = [totals[n] for n in common], [human[n] for n in common]
    for values, what in ((x, "the compared models' totals"), (y, "the human scores")):
        if len(set(values)) == 1:
            raise ClueError(f"{path}: {what} are all equal over the {len(common)} models; no correlation")
    pearson_p, spearman_p = _p_values(scaled(x), scaled(y))
    return {"file": str(path), "n": len(common), "models": {n: human[n] for n in common},
            "pearson": round(pearson(x, y), 4), "pearson_p": float(f"{pearson_p:.4g}"),
            "spearman": round(pearson(ranks(x), ranks(y)), 4), "spearman_p": float(f"{spearman_p:.4g}")}, warnings
