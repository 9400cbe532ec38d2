"""Prompt spread: the task's primary metric under each prompt variant, and its mean ± std across them.

A learner that asked each labelled example under several wordings of the task's prompt records,
in ``prediction.raw["prompt_variants"]``, each wording's answer (``values``: variant name →
prediction value, ``default`` the run's own prompt; ``scores``: the choice scores where there are
some, for a decode step that reads them). The LLM models do with ``--set prompt_variants=all``
and name this metric in their ``extra_metrics``. Each variant's answers are scored exactly as the
run's predictions are: through ``context.score`` (the task's decode step and metrics on dev), so
the ``default`` entry equals the run's primary metric. Totals:

* ``prompt_variant_<name>``: the primary metric under that prompt (``prompt_variant_default`` too);
* ``prompt_spread_mean``, ``prompt_spread_std``: their mean and sample standard deviation (n − 1);
* ``prompt_spread_prompts``: how many prompts (the default included).

Dev only: ``context.score`` scores the dev split, so another labelled split (FewCLUE's
``test_public``) gets no spread; and a scoring without the run's context (``context.score`` itself,
rescoring a predictions file) gets none either. Pure Python.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from clue_core.plugin import Example, MetricResult, Prediction

RAW = "prompt_variants"
PREFIX = "prompt_variant_"
#: Every total's name but the per-variant ones (declared in clue_builtin.hooks, so listing imports no metric code).
PRODUCES = ("prompt_spread_mean", "prompt_spread_std", "prompt_spread_prompts")


def _records(predictions: Sequence[Prediction | None]) -> list[Mapping[str, Any] | None]:
    found: list[Mapping[str, Any] | None] = []
    for prediction in predictions:
        raw = prediction.raw if prediction is not None else None
        record = raw.get(RAW) if isinstance(raw, Mapping) else None
        found.append(record if isinstance(record, Mapping) and isinstance(record.get("values"), Mapping) else None)
    return found


def compute(examples: Sequence[Example], predictions: Sequence[Prediction | None],
            context: Any = None) -> MetricResult:
    """Each variant's primary metric and their spread, from each prediction's record (empty without records)."""
    if context is None or getattr(context, "split", "dev") != "dev":
        return MetricResult({})
    records = _records(predictions)
    names = list(dict.fromkeys(name for record in records if record for name in record["values"]))
    if len(names) < 2:
        return MetricResult({})
    primary = context.primary_metric
    totals: dict[str, float] = {}
    for name in names:
        worded = []
        for prediction, record in zip(predictions, records):
            if prediction is None:
                continue
            if record is None or name not in record["values"]:  # not asked again (no gold): as the run answered
                worded.append(Prediction(prediction.id, prediction.value, prediction.scores, None))
                continue
            scores = (record.get("scores") or {}).get(name) if isinstance(record.get("scores"), Mapping) else None
            worded.append(Prediction(prediction.id, record["values"][name], tuple(scores) if scores else None, None))
        value = context.score(worded).get(primary)
        if isinstance(value, (int, float)):
            totals[f"{PREFIX}{name}"] = float(value)
    values = [totals[f"{PREFIX}{name}"] for name in names if f"{PREFIX}{name}" in totals]
    if len(values) < 2:
        return MetricResult({})
    totals.update({"prompt_spread_mean": statistics.fmean(values), "prompt_spread_std": statistics.stdev(values),
                   "prompt_spread_prompts": float(len(values))})
    return MetricResult(totals)


def variants(totals: Mapping[str, Any]) -> dict[str, float]:
    """``{variant: score}`` of a run's totals (its metrics.json's dev), in recorded order."""
    return {key.removeprefix(PREFIX): float(value) for key, value in totals.items()
            if key.startswith(PREFIX) and isinstance(value, (int, float))}
