"""Predictions checked against their examples, decoded, and scored: one place for all of it.

The runner's final scores and a learner's dev scores during training (``context.score``)
both come from here, so they cannot disagree about missing predictions or decoding.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from clue_core.errors import PluginError
from clue_core.examples import Example, MetricResult, Prediction, gold_of
from clue_core.kinds import OPEN_QUESTION
from clue_core.settings import ResolvedSettings
from clue_core.specs import TaskSpec, resolve

if TYPE_CHECKING:
    from clue_core.context import RunContext
    from clue_core.kernel import Kernel

Decode = Callable[[Sequence[Example], Sequence[Prediction]], Sequence[Prediction]]

#: A run's settings as the steps here take them: resolved (the runner's), a plain mapping of values
#: by name, or None (scoring a predictions file: every step gets its declared defaults).
RunSettings = ResolvedSettings | Mapping[str, Any] | None


def bind_decode(task: TaskSpec, settings: RunSettings) -> Decode | None:
    """The task's decode step, given its own declared settings when it declares any."""
    if not task.decode:
        return None
    decode = resolve(task.decode)
    if task.decode_settings:
        return functools.partial(decode, settings=ResolvedSettings.of(settings).values_for(task.decode_settings))
    return decode


def align(task: TaskSpec, examples: Sequence[Example], predictions: Sequence[Prediction], *,
          allow_missing: bool = False) -> list[Prediction | None]:
    """One prediction per example, in example order (matched by id); missing ones are refused
    unless ``allow_missing`` (then they are None and score as wrong)."""
    by_id = {str(p.id): p for p in predictions}
    ordered = [by_id.get(str(e.id)) for e in examples]
    missing = [e.id for e, p in zip(examples, ordered) if p is None]
    if missing and not allow_missing:
        raise PluginError(f"{task.name}: no prediction for example id {missing[0]!r} "
                          f"({len(missing)} of {len(examples)} missing)")
    return ordered


def predict_checked(learner: Any, examples: Sequence[Example], task: TaskSpec, decode: Decode | None
                    ) -> list[Prediction]:
    """Predict, apply the task's decode step, and insist on one prediction per example, in order."""
    if not examples:
        return []
    predictions = list(learner.predict(examples))
    if len(predictions) != len(examples):
        raise PluginError(f"{task.name}: the model returned {len(predictions)} predictions for "
                          f"{len(examples)} examples")
    for prediction in predictions:
        _check_scores(task, prediction)
    return decode_and_align(task, examples, predictions, decode)  # type: ignore[return-value]


def _check_scores(task: TaskSpec, prediction: Prediction) -> None:
    """A model's scores are finite numbers: a NaN would decide the prediction by accident (every
    comparison with it is false) and write prediction files that strict JSON readers refuse."""
    for value in prediction.scores or ():
        try:
            finite = math.isfinite(value)
        except TypeError:
            finite = False
        if not finite:
            raise PluginError(f"{task.name}: the model's scores for example {prediction.id} hold {value!r}, "
                              f"not a finite number")


def decode_and_align(task: TaskSpec, examples: Sequence[Example], predictions: Sequence[Prediction],
                     decode: Decode | None) -> list[Prediction | None]:
    decoded = list(decode(examples, predictions)) if decode else list(predictions)
    return align(task, examples, decoded)


def score(kernel: Kernel, task: TaskSpec, examples: Sequence[Example], predictions: Sequence[Prediction | None],
          settings: RunSettings = None, context: RunContext | None = None
          ) -> dict[str, float]:
    """All of the task's metrics merged into one mapping of totals."""
    return score_detailed(kernel, task, examples, predictions, settings, context).totals  # type: ignore[return-value]


def score_detailed(kernel: Kernel, task: TaskSpec, examples: Sequence[Example],
                   predictions: Sequence[Prediction | None], settings: RunSettings = None,
                   context: RunContext | None = None) -> MetricResult:
    """Totals, per-example values and details of every metric of the task (empty without gold).

    Open questions are judged against a rubric, so they count as scorable without a
    reference answer.
    """
    totals: dict[str, float] = {}
    per_example: dict[str, Sequence[float | None]] = {}
    details: list[dict[str, Any] | None] = [None] * len(examples)
    resolved = ResolvedSettings.of(settings)
    if task.kind != OPEN_QUESTION and not any(gold_of(e) is not None for e in examples):
        return MetricResult(totals, per_example)
    for name in task.metrics:
        spec = kernel.metric(name)
        kwargs: dict[str, Any] = {}
        if spec.settings:
            kwargs["settings"] = resolved.values_for(spec.settings)
        if spec.uses_model:
            kwargs["context"] = context
        result = resolve(spec.compute)(examples, predictions, **kwargs)
        if isinstance(result, MetricResult):
            totals.update(result.totals)
            per_example.update(result.per_example)
            for index, detail in enumerate(result.details[:len(examples)]):
                if detail:
                    details[index] = {**(details[index] or {}), **detail}
        else:
            totals.update(result)
    return MetricResult(totals, per_example, details)


def dev_scorer(kernel: Kernel, task: TaskSpec, dev: Sequence[Example], decode: Decode | None,
               settings: RunSettings) -> Callable[[Sequence[Prediction]], dict[str, float]]:
    """``context.score``: decode and score dev predictions exactly as the final scores are."""

    def score_dev(predictions: Sequence[Prediction]) -> dict[str, float]:
        return score(kernel, task, dev, decode_and_align(task, dev, predictions, decode), settings)

    return score_dev
