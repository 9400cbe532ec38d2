"""Circular evaluation of multiple choice: each question asked again with its choices reordered (no torch here).

A model that prefers the option at one position (always ``A``) can look right by luck on a
question whose answer happens to sit there. OpenCompass's CircularEval asks each question
under every rotation of its options (``ABCD``, ``BCDA``, ``CDAB``, ``DABC``: rotation ``r``
shows the original choice ``(k + r) mod n`` at position ``k``) and counts a question right only
when every rotation is answered right ("perf_circular"). This module does the same for the
``circular`` setting of the LLM models:

* ``off`` (the default): nothing is reordered;
* ``all``: the ``n`` rotations of a question's ``n`` choices, the original order first;
* ``N`` (an integer ≥ 2): ``N`` orders, the original first, then ``N - 1`` distinct other
  permutations drawn with the run's seed and the example's id (every permutation when
  there are fewer), so the same question gets the same orders in every process and every run.

Only labelled examples are reordered (a test file's answers cannot be checked, and the
submission is the original order's answer). The run's prediction stays the original
order's answer, so plain accuracy and submissions are what they are with ``circular=off``;
each order's answer, mapped back to the original choice's index, is kept in
``raw["circular"]`` (``orders``: the choice shown at each position; ``picks``: the original
index chosen under each order, ``None`` where a generated answer named no choice). Each
reordered question is its own request, so the result cache keys it by its own prompt and
choices: an order scored once (in this run or an earlier one, the original order by a run
with ``circular=off``) is never scored again. The built-in metric ``circular``
(:mod:`clue_builtin.circular`) turns the picks into circular accuracy and each position's
pick rate; the learner names it in its ``extra_metrics``.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import random
import string
from collections.abc import Callable, Sequence
from typing import Any

from clue_core.plugin import MULTIPLE_CHOICE, ClueError, Example, Prediction, TaskSpec
from clue_models_llm.answers import gold
from clue_models_llm.prompts import Question, Renderer

OFF, ALL = "off", "all"
#: The most orders ``circular=N`` may ask for (each one is a full question more per example).
MAX_ORDERS = 64
#: Up to this many choices every permutation is listed before drawing (7! = 5040).
_ENUMERATE = 7
#: The metric the learner adds to a run with circular evaluation on (clue_builtin.circular).
METRIC = "circular"

Order = tuple[int, ...]
#: ``answer(examples, questions) -> predictions``: the learner's likelihood or generation path.
Answer = Callable[[Sequence[Example], Sequence[Question]], list[Prediction]]


def enabled(setting: Any) -> bool:
    """Whether ``setting`` (the ``circular`` value: ``off``, ``all`` or a count) asks for reordering."""
    return setting not in (OFF, None, 0, 1)


def rotations(n: int) -> list[Order]:
    """The ``n`` cyclic rotations of ``n`` choices, the original first (OpenCompass's circular patterns)."""
    return [tuple((k + r) % n for k in range(n)) for r in range(n)]


def permutations(n: int, count: int, seed: int, example_id: Any) -> list[Order]:
    """``count`` distinct orders of ``n`` choices, the original first, the rest drawn with ``seed`` and the id.

    Fewer than ``count`` where ``n!`` is smaller (every order then). The draw depends only on
    the seed, the example's id and ``n``, never on which process or in what batch it is asked.
    """
    identity = tuple(range(n))
    total = math.factorial(n)
    wanted = min(count, total) - 1
    rng = random.Random(f"circular:{seed}:{example_id}:{n}")
    if n <= _ENUMERATE:
        others = [order for order in itertools.permutations(range(n)) if order != identity]
        return [identity, *rng.sample(others, wanted)]
    drawn: dict[Order, None] = {}
    while len(drawn) < wanted:
        order = list(identity)
        rng.shuffle(order)
        if tuple(order) != identity:
            drawn[tuple(order)] = None
    return [identity, *drawn]


def orders(setting: Any, n: int, seed: int, example_id: Any) -> list[Order]:
    """The orders one question of ``n`` choices is asked in under ``setting``; only the original when off."""
    if not enabled(setting) or n < 2:
        return [tuple(range(n))]
    if setting == ALL:
        return rotations(n)
    if isinstance(setting, bool) or not isinstance(setting, int) or not 2 <= setting <= MAX_ORDERS:
        raise ClueError(f"setting 'circular': expected 'off', 'all' or a count from 2 to {MAX_ORDERS}, "
                        f"got {setting!r}")
    return permutations(n, setting, seed, example_id)


def reordered(example: Example, order: Order) -> Example:
    """``example`` with its choices shown in ``order`` (``order[k]``: the original index shown at position ``k``)."""
    choices = example.choices  # type: ignore[attr-defined]
    label = example.label  # type: ignore[attr-defined]
    moved = tuple(choices[i] for i in order)
    return dataclasses.replace(example, choices=moved,  # type: ignore[type-var]
                               label=None if label is None else order.index(label))


def ask(examples: Sequence[Example], renderer: Renderer, setting: Any, seed: int, answer: Answer,
        questions: Sequence[Question] | None = None) -> list[Prediction]:
    """Every example answered in its original order (the predictions) and, where labelled, in its other orders.

    ``questions`` are the examples already rendered in their original order (rendered here when
    not given). All questions go to ``answer`` in one call (one progress bar, one pass over the
    cache); the returned predictions are the original orders', each with ``raw["circular"]``
    where the example was reordered.
    """
    plans = [orders(setting, len(e.choices), seed, e.id) if gold(e) is not None else []  # type: ignore[attr-defined]
             for e in examples]
    asked: list[Example] = list(examples)
    questions = list(questions) if questions is not None else [renderer.render(example) for example in examples]
    for example, planned in zip(examples, plans):
        for order in planned[1:]:
            moved = reordered(example, order)
            asked.append(moved)
            questions.append(renderer.render(moved))
    answered = answer(asked, questions)
    plain, rest = answered[:len(examples)], iter(answered[len(examples):])
    result = []
    for prediction, planned in zip(plain, plans):
        if len(planned) < 2:
            result.append(prediction)
            continue
        picks: list[int | None] = [_index(prediction.value)]
        usage: list[Any] = []
        for order in planned[1:]:
            moved = next(rest)
            position = _index(moved.value)
            picks.append(order[position] if position is not None and 0 <= position < len(order) else None)
            if isinstance(moved.raw, dict):  # a server's tokens: what the reordered questions cost too
                usage += moved.raw.get("usage") or []
        record: dict[str, Any] = {"setting": setting, "orders": [list(o) for o in planned], "picks": picks}
        if usage:
            record["usage"] = usage
        raw = prediction.raw if isinstance(prediction.raw, dict) else {}
        result.append(dataclasses.replace(prediction, raw={**raw, "circular": record}))
    return result


def _index(value: Any) -> int | None:
    """A multiple-choice answer as a choice index, ``None`` for no answer."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def skipped(task: TaskSpec, preset: bool = False) -> str | None:
    """Why circular evaluation does not apply to this task (``None``: it does); ``preset``: the task is asked
    under another framework's protocol (``protocol=opencompass:…``), which renders and reads it its own way."""
    if task.kind != MULTIPLE_CHOICE:
        return (f"not applied: only multiple-choice questions list their choices at positions; this task's are "
                f"{task.kind} (a classification's labels are scored or named as words, never listed as options)")
    template = task.prompt.template if task.prompt is not None else ""
    if "choices" not in {name for _, name, _, _ in string.Formatter().parse(template) if name}:
        return "not applied: the task's prompt does not list the choices ({choices}), so their order is not shown"
    if preset:
        return "not applied: a protocol preset asks and reads the question as its own framework does"
    return None


def info(setting: Any, note: str | None, seed: int | None, questions: int) -> dict[str, Any]:
    """``model_info["circular"]``: how questions were reordered (and how many were), or why they were not."""
    if note is not None:
        return {"setting": setting, "applied": False, "note": note}
    how = "every rotation" if setting == ALL else \
        f"{setting} seeded orders (the original first; every order of a question that has fewer)"
    return {"setting": setting, "applied": True, "orders": how, "seed": seed, "questions": questions}
