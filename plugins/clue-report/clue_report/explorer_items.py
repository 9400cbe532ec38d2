"""One example's inputs and one run's answer to it, as the explorer stores them.

An example (:func:`describe`) keeps what a reader needs to judge the answer: the sentence
pair, the passage and question, the choices (CHID's blank stays ``____`` in its context), the
open question's turns, a plugin's kind's text or question and other fields (``fields``, ``[name, text]``
pairs: :mod:`clue_report.views`); its gold answer as shown (``gold``) and as the filters match it (``g``).
An answer (:func:`item_of`) keeps the prediction (``p`` as matched, ``pred`` as shown when that
differs), whether it is right (``ok``: the run's primary metric at its maximum, or the checker's
verdict; ``None`` where neither says), the per-choice scores, what an LLM generated before its
answer was extracted, and a SuperCLUE judge's grade and reasons or a checker's failing reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from clue_core.plugin import (
    ClassificationExample,
    Example,
    MultipleChoiceExample,
    SpanExample,
    TaskSpec,
)
from clue_report import views
from clue_report.scored import Scored

#: The longest generation kept per answer (characters); the rest is cut, and said so.
GENERATION = 2000
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def clean(value: Any) -> Any:
    """``value`` with every text made writable as UTF-8: a lone surrogate (``"\\ud800"`` in a JSON
    file reads as one) becomes U+FFFD, a valid pair the character it stands for. One such text would
    otherwise stop the whole report when the page is written."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
            return value
        except UnicodeEncodeError:
            return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if isinstance(value, list):
        return [clean(v) for v in value]
    if isinstance(value, dict):
        return {k: clean(v) for k, v in value.items()}
    return value


def _cut(text: str, width: int = GENERATION) -> str:
    return text if len(text) <= width else text[:width] + f"… ({len(text) - width} more characters)"


def _choice(example: MultipleChoiceExample, value: Any) -> str:
    """``B. 守株待兔`` for choice 1; the value itself when it is no choice."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < len(example.choices):
        return f"{LETTERS[value] if value < len(LETTERS) else value}. {example.choices[value]}"
    return "—" if value is None else str(value)


def _label(task: TaskSpec, value: Any) -> str:
    """A label with its description (``1 (相同)``), as the report shows labels."""
    if value is None:
        return "—"
    description = task.label_descriptions.get(str(value))
    return f"{value} ({description})" if description else str(value)


def describe(task: TaskSpec, example: Example, from_data: bool) -> dict[str, Any]:
    """The example's inputs and gold answer; ``from_data=False`` (rebuilt from the records) has no texts."""
    item: dict[str, Any] = {"id": str(example.id)}
    if isinstance(example, ClassificationExample):
        item.update(text=example.text, gold=_label(task, example.label),
                    g=None if example.label is None else str(example.label))
        if example.text_pair is not None:
            item["text_pair"] = example.text_pair
    elif isinstance(example, SpanExample):
        answers = list(dict.fromkeys(text for text, _ in example.answers or ()))
        item.update(question=example.question, context=example.context, gold=" | ".join(answers) or "—", g=None)
        if example.title:
            item["title"] = example.title
    elif isinstance(example, MultipleChoiceExample):
        item.update(question=example.question, context=example.context, choices=list(example.choices),
                    gold=_choice(example, example.label), g=None if example.label is None else str(example.label))
    elif isinstance(getattr(example, "turns", None), tuple):  # an open question (SuperCLUE's kind), by its fields
        item.update(turns=list(example.turns), dimension=getattr(example, "dimension", ""),
                    category=getattr(example, "category", ""), gold=getattr(example, "reference", None) or "—",
                    g=None)
    else:  # a plugin's kind (NER, KBQA, a third party's): by its name and fields (clue_report.views)
        item.update(views.view(task, example), gold=views.gold_text(task, example), g=None)
    if not from_data:
        item["unread"] = True
    return clean(item)


def unread(record: Mapping[str, Any]) -> dict[str, Any]:
    """An example known from its record alone (its dev data is gone and its kind cannot be rebuilt):
    the id and the gold answer as the record has it."""
    gold = record.get("gold")
    text = ("—" if gold is None or gold == "" else " | ".join(views.text_of(v) for v in gold) if isinstance(gold, list)
            else views.text_of(gold))  # a plugin's kind's [type, start, end] as JSON, not Python's repr
    return clean({"id": str(record.get("id")), "gold": text, "g": None, "unread": True})


def generated(raw: Any) -> str | None:
    """What a model generated before its answer was extracted: the raw text, or the generation an LLM
    record keeps (clue-models-llm's ``{"prompt", "generation"}``; a likelihood record has none)."""
    if isinstance(raw, str):
        return raw
    if isinstance(raw, Mapping):
        for key in ("generation", "text", "output"):
            if isinstance(raw.get(key), str):
                return raw[key]
        for key in ("generations", "answers"):
            values = raw.get(key)
            if isinstance(values, list) and values and isinstance(values[-1], str):
                return values[-1]
    return None


def _prediction_key(value: Any) -> str | None:
    return None if value is None else str(value)


def _correct(task: TaskSpec, example: Example | None, record: Mapping[str, Any], scored: Scored | None, index: int,
             metric: str) -> bool | None:
    values = scored.per_example.get(metric) if scored is not None else None
    if values is not None and index < len(values) and values[index] is not None:
        return bool(values[index] >= 100.0)
    scoring = record.get("scoring")
    if isinstance(scoring, Mapping) and isinstance(scoring.get("passed"), bool):
        return scoring["passed"]
    if isinstance(example, (ClassificationExample, MultipleChoiceExample)):
        return None if example.label is None else record.get("prediction") == example.label
    if example is not None and not isinstance(example, SpanExample) and not hasattr(example, "turns"):
        return views.right(task, example, record.get("prediction"))  # a plugin's kind: the answer is the gold
    return None


def _scoring(item: dict[str, Any], scoring: Any) -> None:
    """A SuperCLUE judge's grade and reasons, or a verifiable check's failing reason."""
    if not isinstance(scoring, Mapping):
        return
    judge = scoring.get("judge")
    if isinstance(judge, Mapping):
        grade = judge.get("grade")
        if isinstance(grade, (int, float)) and not isinstance(grade, bool):
            item["grade"] = grade
        for key, name in (("reasons", "reasons"), ("band", "band")):
            if isinstance(judge.get(key), str) and judge[key]:
                item[name] = _cut(judge[key])
    if isinstance(scoring.get("passed"), bool) and not scoring["passed"] and isinstance(scoring.get("reason"), str):
        item["checker"] = _cut(scoring["reason"])


def item_of(task: TaskSpec, example: Example | None, record: Mapping[str, Any], scored: Scored | None, index: int,
            metric: str) -> dict[str, Any]:
    """One run's answer to ``example`` (``record`` is its line of predictions/dev.jsonl; ``example`` and
    ``scored`` are ``None`` for a run whose examples could not be read nor rebuilt: the record alone)."""
    value = record.get("prediction")
    item: dict[str, Any] = {"id": str(example.id if example is not None else record.get("id")),
                            "p": _prediction_key(value),
                            "ok": _correct(task, example, record, scored, index, metric)}
    if isinstance(example, MultipleChoiceExample):
        item["pred"] = _choice(example, value)
    elif isinstance(example, ClassificationExample) and _label(task, value) != item["p"]:
        item["pred"] = _label(task, value)
    elif example is not None and task.kind == views.ENTITY_SPANS:
        item["pred"] = views.value_text(task, example, value)
    scores = record.get("scores")
    if isinstance(scores, list) and scores:
        item["scores"] = scores
    raw = record.get("raw")
    said = generated(raw)
    if said is not None and said != value:
        item["said"] = _cut(said)
    if isinstance(raw, Mapping) and raw.get("extracted") is False:
        item["extracted"] = False
    _scoring(item, record.get("scoring"))
    return clean(item)
