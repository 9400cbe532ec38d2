"""The ``superclue`` metric: score every answered question, by code or by the judge.

Each question is scored by one method:

* ``constraints`` (verifiable instructions): points 10 when every constraint passes
  strictly, else 0; the loose result is recorded beside it;
* ``tool_call`` (a question with an expected call): points 10 when the call was made, else 0;
* ``judge``: everything else, graded 1–10 by the judge model with the dimension's rubric
  prompt; points are the grade, or null when the judgment did not parse even after the
  repair prompt, or when the run names no judge (``judge`` empty): such questions are
  *unjudged*, counted in ``unjudged`` and left out of the scores, never scored silently.

With ``reference_run`` every question the reference run answered is also judged pairwise
(see :mod:`clue_tasks_superclue.pairwise`; the verdict rule is
:mod:`clue_tasks_superclue.win_tie_loss`), which needs a judge. What was found per
question goes into the prediction records (``scoring``), and the totals are computed from
those records alone (:mod:`clue_tasks_superclue.aggregate`). The judge's own run report
(model identity, decoding, cache hits) is written to ``judge.json`` in the run folder.

``judge=a,b,c`` names a panel (:mod:`clue_tasks_superclue.panel`): every judge is asked
everything, each one's grade is kept in ``scoring.judges`` and the panel's, under
``judge_aggregate``, in ``scoring.judge``; ``judge.json`` then holds every judge's report and
the agreement between them (:func:`clue_tasks_superclue.aggregate.agreement`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from clue_core.plugin import MetricResult, Prediction, RunContext, write_json
from clue_tasks_superclue import aggregate, pairwise, panel, win_tie_loss
from clue_tasks_superclue.constraints import check_all
from clue_tasks_superclue.examples import OpenQuestionExample
from clue_tasks_superclue.judge import Judge, Judgment, Request, grade_request, pairwise_request
from clue_tasks_superclue.judge_prompts import grade_prompt, pairwise_prompt, turn_texts
from clue_tasks_superclue.tool_calls import calls_of, check_call

JUDGE_FILE = "judge.json"
NO_JUDGE = "no judge: the run names none (--set judge=MODEL)"


def method_of(example: OpenQuestionExample) -> str:
    if example.constraints:
        return "constraints"
    if example.expected_call is not None:
        return "tool_call"
    return "judge"


def compute(examples: Sequence[OpenQuestionExample], predictions: Sequence[Prediction | None], *,
            settings: Mapping[str, Any], context: RunContext | None = None) -> MetricResult:
    judge_name = str(settings.get("judge") or "")
    reference_run = str(settings.get("reference_run") or "")
    if reference_run:  # checked when planned too (pairwise.check_settings), but it may have gone since
        pairwise.require_judge(judge_name)
    references = pairwise.read_reference(reference_run) if reference_run else None
    details = [_base(example, prediction) for example, prediction in zip(examples, predictions)]
    requests: list[Request] = []
    for example, prediction, detail in zip(examples, predictions, details):
        answers = turn_texts(prediction.raw if prediction else None, prediction.value if prediction else "",
                             len(example.turns))
        if detail["method"] == "judge" and not detail.get("missing") and judge_name:
            requests.append(grade_request(f"grade/{example.id}", grade_prompt(example, answers), example.dimension,
                                          example.category))
        if references is not None:
            reference = references.get(str(example.id))
            if reference is None or detail.get("missing"):
                detail["pairwise"] = {"verdict": None, "reference_answer": None, "orders": []}
                continue
            theirs = turn_texts(reference.raw, reference.prediction, len(example.turns))
            detail["pairwise"] = {"verdict": None, "reference_answer": str(reference.prediction or ""), "orders": []}
            requests.append(pairwise_request(f"pair/{example.id}/model-first",
                                             pairwise_prompt(example, answers, theirs), example.dimension,
                                             example.category))
            requests.append(pairwise_request(f"pair/{example.id}/model-second",
                                             pairwise_prompt(example, theirs, answers), example.dimension,
                                             example.category))
    names = panel.judge_names(judge_name)
    judges: list[Judge] = []
    if requests and context is not None and context.load_model is not None:
        judges = [Judge.load(name, context, namespace) for name, namespace in zip(names, panel.namespaces(names))]
    asked = [judge.ask(requests) for judge in judges]
    how = str(settings.get("judge_aggregate") or "mean")
    for example, detail in zip(examples, details):
        if len(names) > 1:
            _fill_panel(example, detail, names, asked, how)
        else:
            _fill_judgments(example, detail, asked[0] if asked else {}, judge_name)
    totals = aggregate.totals(details)
    if judges:
        totals.update(_cache_totals([judge.info() for judge in judges]))
        _report_judges(judges, details, how, context)
    per_example = {"score": [aggregate.question_score(d) for d in details]}
    return MetricResult(totals, per_example, details)


def _cache_totals(infos: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """``judge_cached``/``judge_generated``: the judges' cache hits and computed requests, summed over a panel."""
    caches = [info.get("cache") or {} for info in infos]
    if not all("misses" in cache for cache in caches):
        return {}
    return {"judge_cached": float(sum(cache.get("hits", 0) for cache in caches)),
            "judge_generated": float(sum(cache.get("misses", 0) for cache in caches))}


def _report_judges(judges: Sequence[Judge], details: Sequence[Mapping[str, Any]], how: str,
                   context: RunContext | None) -> None:
    """``judge.json``: the judge's own report, or for a panel each judge's, the rule and the agreement's notes."""
    if len(judges) == 1:
        info: dict[str, Any] = judges[0].info()
    else:
        found, notes = aggregate.agreement(details)
        info = {"panel": [judge.info() for judge in judges], "judge_aggregate": how,
                "agreement": {**found, "notes": notes}}
        if context is not None:
            for note in notes:
                context.echo(f"superclue: note: {note}")
    if context is not None and context.is_main:
        write_json(Path(context.run_dir) / JUDGE_FILE, info)


def _fill_panel(example: OpenQuestionExample, detail: dict[str, Any], names: Sequence[str],
                asked: Sequence[Mapping[str, Judgment]], how: str) -> None:
    """A panel's grades and verdicts (:mod:`clue_tasks_superclue.panel`): each judge's kept, and the panel's."""
    if detail["method"] == "judge" and not detail.get("missing"):
        if not asked:
            detail["judge"] = {"grade": None, "parsed": False, "repaired": False, "output": None,
                               "reasons": "not asked"}
        else:
            detail["judge"], detail["judges"] = panel.grade_record(
                names, [judgments.get(f"grade/{example.id}") for judgments in asked], how)
            detail["points"] = detail["judge"]["grade"]
    pair = detail.get("pairwise")
    if pair is None or pair["reference_answer"] is None or not asked:
        return
    pair["verdict"], pair["orders"], pair["judges"] = panel.pairwise_record(
        names, [_orders(example, judgments) for judgments in asked], how)


def _base(example: OpenQuestionExample, prediction: Prediction | None) -> dict[str, Any]:
    """The record of one question before judging: what code can decide alone."""
    method = method_of(example)
    detail: dict[str, Any] = {"dimension": example.dimension, "category": example.category, "method": method,
                              "points": None}
    # a model that has no answer (recorded answers without this question) says so with None: scored
    # as wrong and counted, never checked or judged as if it had answered "" (a length limit passes "")
    if prediction is None or prediction.value is None:
        detail["missing"] = True
        detail["points"] = 0.0
        return detail
    answer = str(prediction.value)
    if method == "constraints":
        found = check_all(answer, example.constraints)
        detail["constraints"] = found
        detail["points"] = 10.0 if found["strict"] else 0.0
    elif method == "tool_call":
        assert example.expected_call is not None
        found = check_call(example.expected_call, calls_of(prediction.raw if prediction else None, answer))
        detail["tool_call"] = found
        detail["points"] = 10.0 if found["correct"] else 0.0
    return detail


def _fill_judgments(example: OpenQuestionExample, detail: dict[str, Any], judgments: Mapping[str, Judgment],
                    judge_name: str) -> None:
    if detail["method"] == "judge" and not detail.get("missing"):
        judgment = judgments.get(f"grade/{example.id}")
        if judgment is None:
            detail["judge"] = {"grade": None, "parsed": False, "repaired": False,
                               "output": None, "reasons": NO_JUDGE if not judge_name else "not asked"}
        else:
            detail["judge"] = judgment.as_dict("grade")
            detail["points"] = float(judgment.parsed.value) if judgment.parsed else None
    pair = detail.get("pairwise")
    if pair is None or pair["reference_answer"] is None:
        return
    pair["orders"] = _orders(example, judgments)
    pair["verdict"] = win_tie_loss.by_orders(pair["orders"])


def _orders(example: OpenQuestionExample, judgments: Mapping[str, Judgment]) -> list[dict[str, Any]]:
    """One judge's two pairwise orders of a question (model first, then second), as asked."""
    orders = []
    for key, model_first in ((f"pair/{example.id}/model-first", True), (f"pair/{example.id}/model-second", False)):
        judgment = judgments.get(key)
        if judgment is None:
            continue
        letter = judgment.parsed.value if judgment.parsed else None
        order = judgment.as_dict("letter")
        orders.append({"model_first": model_first, "winner": win_tie_loss.order_winner(letter, model_first), **order})
    return orders
