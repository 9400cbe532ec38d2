"""Predictions checked against their examples, decoded, and scored: one place for all of it.

The runner's final scores and a learner's dev scores during training (``context.score``)
both come from one :class:`TaskScoring`, built once from the task's plan, so they cannot
disagree about missing predictions, decoding or a metric's settings. Scoring without a run
(a predictions file, :mod:`clue_core.evaluate`) goes through :func:`score` and the same steps.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from clue_core.errors import ClueError, PluginError
from clue_core.examples import Example, MetricResult, Prediction, gold_of
from clue_core.kinds import KindSpec, kind_spec, using
from clue_core.settings import ResolvedSettings
from clue_core.specs import MetricSpec, TaskSpec, resolve

if TYPE_CHECKING:
    from clue_core.context import RunContext
    from clue_core.registry import Registry

Decode = Callable[[Sequence[Example], Sequence[Prediction]], Sequence[Prediction]]

#: A run's settings as the steps here take them: resolved (the runner's), a plain mapping of values
#: by name, or None (scoring a predictions file: every step gets its declared defaults).
RunSettings = ResolvedSettings | Mapping[str, Any] | None

#: Each of a task's metrics: its spec, its function, its own settings' values (None: it declares none).
MetricStep = tuple[MetricSpec, Callable[..., Any], "dict[str, Any] | None"]
MetricSteps = Iterable[MetricStep]


@dataclass(frozen=True)
class Scored:
    """A task's final predictions (decoded, one per example, in order) beside their examples, and
    the dev scores: everything the writer records, handed over in one piece."""

    dev: Sequence[Example]
    dev_predictions: list[Prediction]
    detailed: MetricResult
    tests: dict[str, tuple[Sequence[Example], list[Prediction]]]
    scored: dict[str, tuple[Sequence[Example], list[Prediction], MetricResult]] = field(default_factory=dict)


class TaskScoring:
    """One task's scoring, bound once before training (a learner may score dev while it trains:
    :meth:`score_dev` is ``context.score``), asked once after it (:meth:`results`): the kind's spec and
    check, each metric's function and its own settings' values, the decode step. Code of these that does
    not import is its one line before training, not after it; the methods look nothing up again."""

    def __init__(self, kernel: Registry, task: TaskSpec, dev: Sequence[Example], settings: RunSettings,
                 extra_metrics: Sequence[str] = ()) -> None:
        # ``extra_metrics``: metrics the run's learner adds to the task's (an LLM's circular evaluation
        # scores what only it recorded in its predictions' raw); the task's own come first and stay primary
        self.task, self.dev, self.kinds = task, dev, kernel.kinds  # its kind as this kernel declares it
        self.decode = bind_decode(task, settings)
        self.steps = list(metric_steps(kernel, (*task.metrics, *extra_metrics), settings))
        with using(self.kinds):
            self.kind = kind = kind_spec(task.kind)
        try:
            self.check: Callable[..., str | None] = resolve(kind.check_prediction)
        except Exception as exc:
            raise PluginError(f"kind {kind.name}: check_prediction {kind.check_prediction} could not be loaded "
                              f"({type(exc).__name__}: {exc})") from exc

    def score_dev(self, predictions: Sequence[Prediction]) -> dict[str, float]:
        """``context.score``: decode and score dev predictions exactly as the final scores are."""
        with using(self.kinds):
            aligned = decode_and_align(self.task, self.dev, predictions, self.decode)
            return apply_metrics(self.kind, self.steps, self.dev, aligned).totals  # type: ignore[return-value]

    def results(self, learner: Any, tests: Mapping[str, Sequence[Example]], context: RunContext,
                scored: Mapping[str, Sequence[Example]] | None = None) -> Scored:
        """Predict dev and score it, then each scored split (labelled, scored as dev is: FewCLUE's
        ``test_public``), then predict each test version: the run's results, in that order. Asked inside
        the runner's ``kinds.using`` (:meth:`score_dev` enters it: a learner may score on a thread of its own)."""
        dev, steps = self.dev, self.steps
        cursor = context.cursor  # context.split: each progress line a learner prints names its split
        try:
            cursor.name = "dev"
            dev_predictions = predict_checked(learner, dev, self)
            detailed = apply_metrics(self.kind, steps, dev, dev_predictions, context)
            extra = {}
            for split, examples in (scored or {}).items():
                cursor.name = split
                predictions = predict_checked(learner, examples, self)
                extra[split] = (examples, predictions, apply_metrics(self.kind, steps, examples, predictions, context))
            tested = {}
            for version, examples in tests.items():
                cursor.name = f"test {version}"
                tested[version] = (examples, predict_checked(learner, examples, self))
        finally:
            cursor.name = ""
        return Scored(dev, dev_predictions, detailed, tested, extra)


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


def predict_checked(learner: Any, examples: Sequence[Example], bound: TaskScoring) -> list[Prediction]:
    """Predict, decode, and insist on one prediction per example, in order, each of the task's kind."""
    task = bound.task
    if not examples:
        return []
    predictions = list(learner.predict(examples))
    if len(predictions) != len(examples):
        raise PluginError(f"{task.name}: the model returned {len(predictions)} predictions for "
                          f"{len(examples)} examples")
    for prediction in predictions:
        _check_scores(task, prediction)
    aligned = decode_and_align(task, examples, predictions, bound.decode)
    _check_values(task, bound.kind, bound.check, examples, aligned)
    return aligned  # type: ignore[return-value]


def _check_values(task: TaskSpec, kind: KindSpec, check: Callable[..., str | None], examples: Sequence[Example],
                  predictions: Sequence[Prediction | None]) -> None:
    """A model's answers are of the task's kind (the check a leaderboard file gets), so a model returning
    a malformed value is one line naming it, not a traceback from deep inside a metric. ``None`` is no
    answer (an LLM's unparsable one), which metrics count as wrong."""
    for example, prediction in zip(examples, predictions):
        if prediction is None or prediction.value is None:
            continue
        try:
            problem = check(task, example, prediction.value)
        except Exception as exc:
            raise PluginError(f"kind {kind.name}: check_prediction raised {type(exc).__name__}: {exc}") from exc
        if problem:
            raise PluginError(f"{task.name}: the model's prediction for example {prediction.id!r}: {problem}")


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


def score(kernel: Registry, task: TaskSpec, examples: Sequence[Example], predictions: Sequence[Prediction | None],
          settings: RunSettings = None, context: RunContext | None = None) -> dict[str, float]:
    """All of the task's metrics merged into one mapping of totals."""
    return score_detailed(kernel, task, examples, predictions, settings, context).totals  # type: ignore[return-value]


def score_detailed(kernel: Registry, task: TaskSpec, examples: Sequence[Example],
                   predictions: Sequence[Prediction | None], settings: RunSettings = None,
                   context: RunContext | None = None) -> MetricResult:
    """Totals, per-example values and details of every metric of the task (empty without gold), each looked
    up as it comes to score; the examples' gold where ``kernel`` declares their kind has it (``evaluate``'s)."""
    with using(kernel.kinds):
        return apply_metrics(kind_spec(task.kind), metric_steps(kernel, task.metrics, settings), examples,
                             predictions, context)


def metric_steps(kernel: Registry, names: Iterable[str], settings: RunSettings) -> MetricSteps:
    """Each named metric (once), its function and its own settings' values, bound as it is iterated."""
    resolved = ResolvedSettings.of(settings)
    for spec in (kernel.metric(name) for name in dict.fromkeys(names)):
        try:
            compute = resolve(spec.compute)
        except ClueError:
            raise
        except Exception as exc:  # a metric whose code does not import: one line naming it
            raise PluginError(f"metric {spec.name} raised {type(exc).__name__}: {exc}") from exc
        yield spec, compute, resolved.values_for(spec.settings) if spec.settings else None


def apply_metrics(kind: KindSpec, steps: MetricSteps, examples: Sequence[Example],
                  predictions: Sequence[Prediction | None], context: RunContext | None = None) -> MetricResult:
    """Every metric of ``steps`` merged: totals, per-example values and details (empty without gold).

    A kind whose spec is ``open`` (open questions, judged by a model) is scored without
    gold too. Each metric gets its own copy of its settings (a metric that changes
    them cannot change the next scoring's); ``steps`` may be lazy (:func:`metric_steps`), so without gold
    no metric is even looked up.
    """
    totals: dict[str, float] = {}
    per_example: dict[str, Sequence[float | None]] = {}
    details: list[dict[str, Any] | None] = [None] * len(examples)
    if not kind.open and not any(gold_of(e) is not None for e in examples):
        return MetricResult(totals, per_example)
    for spec, compute, values in steps:
        kwargs: dict[str, Any] = {}
        if values is not None:
            kwargs["settings"] = dict(values)
        if spec.uses_model:
            kwargs["context"] = context
        try:
            result = compute(examples, predictions, **kwargs)
        except (ClueError, KeyboardInterrupt):  # the metric's own one-line errors, and Ctrl-C, as they are
            raise
        except Exception as exc:  # a plugin's metric failing: one line naming it (--strict shows the traceback)
            raise PluginError(f"metric {spec.name} raised {type(exc).__name__}: {exc}") from exc
        if isinstance(result, MetricResult):
            totals.update(result.totals)
            per_example.update(result.per_example)
            for index, detail in enumerate(result.details[:len(examples)]):
                if detail:
                    details[index] = {**(details[index] or {}), **detail}
        else:
            totals.update(result)
    return MetricResult(totals, per_example, details)
