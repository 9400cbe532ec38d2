"""Where a run goes wrong: confusion, per-label F1, accuracy by context length, wrong examples.

All of it is computed from a run's re-scored dev predictions (:mod:`clue_report.scored`)
and returned as plain numbers for ``report.json``; the pages only draw what is here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from clue_core.plugin import ClassificationExample, MultipleChoiceExample, SpanExample, TaskSpec
from clue_report import views
from clue_report.scored import Scored

NO_PREDICTION = "(none)"
#: Confused pairs listed per run (IFLYTEK has 119 labels: the matrix is too big to read).
TOP_PAIRS = 10
WRONG_EXAMPLES = 5
LENGTH_BINS = 4
EXCERPT = 160


def confusion(task: TaskSpec, scored: Scored) -> dict[str, Any]:
    """Gold × predicted counts over the task's labels (plus any stray value, and ``(none)``
    for missing predictions), per-label precision/recall/F1 ×100 and the most confused pairs."""
    gold = [str(e.label) for e in scored.examples if isinstance(e, ClassificationExample)]
    predicted = [NO_PREDICTION if p is None or p.value is None else str(p.value) for p in scored.predictions]
    labels = list(dict.fromkeys([*task.labels, *gold]))
    columns = labels + [v for v in dict.fromkeys(predicted) if v not in labels]
    index = {label: i for i, label in enumerate(columns)}
    matrix = np.zeros((len(labels), len(columns)), dtype=np.int64)
    for g, p in zip(gold, predicted):
        matrix[index[g], index[p]] += 1
    per_label = []
    for i, label in enumerate(labels):
        tp = int(matrix[i, i])
        support = int(matrix[i].sum())
        predicted_as = int(matrix[:, i].sum())
        precision = 100.0 * tp / predicted_as if predicted_as else 0.0
        recall = 100.0 * tp / support if support else 0.0
        f1 = 200.0 * tp / (support + predicted_as) if support + predicted_as else 0.0
        per_label.append({"label": label, "precision": precision, "recall": recall, "f1": f1,
                          "support": support, "predicted": predicted_as})
    pairs = [{"gold": labels[i], "predicted": columns[j], "count": int(matrix[i, j])}
             for i in range(len(labels)) for j in range(len(columns)) if labels[i] != columns[j] and matrix[i, j]]
    pairs.sort(key=lambda pair: -pair["count"])
    return {"labels": labels, "columns": columns, "matrix": matrix.tolist(), "per_label": per_label,
            "confused_pairs": pairs[:TOP_PAIRS], "descriptions": dict(task.label_descriptions)}


def context_length(scored: Scored, metric: str, bins: int = LENGTH_BINS) -> list[dict[str, Any]]:
    """``metric``'s mean per context-length bin (characters; bins at quantiles, so each holds
    about as many examples), for span and multiple-choice runs read from their data."""
    values = scored.per_example.get(metric)
    if not scored.from_data or values is None:
        return []
    pairs = [(len(e.context), v) for e, v in zip(scored.examples, values)
             if isinstance(e, (SpanExample, MultipleChoiceExample)) and v is not None]
    if not pairs:
        return []
    lengths = np.array([length for length, _ in pairs], dtype=np.int64)
    scores = np.array([value for _, value in pairs], dtype=np.float64)
    edges = np.unique(np.quantile(lengths, np.linspace(0, 1, bins + 1), method="nearest"))
    rows = []
    for position, low in enumerate(edges[:-1] if len(edges) > 1 else edges):
        last = position >= len(edges) - 2
        high = edges[-1] if last else edges[position + 1] - 1
        chosen = (lengths >= low) & (lengths <= high)
        if chosen.any():
            rows.append({"low": int(low), "high": int(high), "n": int(chosen.sum()),
                         "value": float(scores[chosen].mean()), "metric": metric})
    return rows


def _excerpt(text: str, around: int | None = None, width: int = EXCERPT) -> str:
    if len(text) <= width:
        return text
    start = 0 if around is None else max(0, min(around - width // 2, len(text) - width))
    return ("…" if start else "") + text[start:start + width] + ("…" if start + width < len(text) else "")


def _value_text(example: Any, value: Any) -> str:
    if isinstance(example, MultipleChoiceExample) and isinstance(value, int) and 0 <= value < len(example.choices):
        return f"{value}: {example.choices[value]}"
    if isinstance(value, list):
        return " | ".join(dict.fromkeys(str(v) for v in value))
    return "—" if value is None else str(value)


def _builtin(example: Any) -> bool:
    """An example of the built-in kinds or an open question, each shown its own way (else :mod:`clue_report.views`)."""
    return isinstance(example, (ClassificationExample, SpanExample, MultipleChoiceExample)) or isinstance(
        getattr(example, "turns", None), tuple)


def _describe(task: TaskSpec, example: Any) -> dict[str, Any]:
    if not _builtin(example):  # a plugin's kind (NER, KBQA, a third party's): by its name and fields
        found = views.view(task, example)
        for key in ("text", "question"):
            if key in found:
                found[key] = _excerpt(found[key])
        if found.get("fields"):
            found["fields"] = [[name, _excerpt(text)] for name, text in found["fields"]]
        return found
    if isinstance(example, ClassificationExample):
        return {"text": example.text, "text_pair": example.text_pair}
    if isinstance(example, SpanExample):
        start = next((s for _, s in example.answers or () if s is not None), None)
        return {"text": example.question, "context": _excerpt(example.context, start)}
    if isinstance(example, MultipleChoiceExample):
        return {"text": example.question, "context": _excerpt(example.context), "choices": list(example.choices)}
    turns = getattr(example, "turns", None)  # an open question (SuperCLUE's kind), read by its fields
    if isinstance(turns, tuple):
        return {"text": " / ".join(turns)}
    return {}


def _said(raw: Any) -> str | None:
    """What a model said before its answer was extracted: the raw text, or a generation in a raw record
    (clue-models-llm keeps ``{"prompt", "generation"}``; a likelihood record has no text to show)."""
    if isinstance(raw, str):
        return raw
    if isinstance(raw, Mapping):
        for key in ("generation", "text", "answer", "output"):
            if isinstance(raw.get(key), str):
                return raw[key]
        generations = raw.get("generations")
        if isinstance(generations, list) and generations and isinstance(generations[-1], str):
            return generations[-1]
    return None


def wrong_examples(task: TaskSpec, scored: Scored, metric: str, seed: int = 0,
                   count: int = WRONG_EXAMPLES) -> list[dict[str, Any]]:
    """A seeded handful of examples the run got wrong (``metric`` below its maximum, or a
    prediction unequal to gold), in data order, with the model's answer."""
    values = scored.per_example.get(metric)
    wrong = []
    for i, (example, prediction) in enumerate(zip(scored.examples, scored.predictions)):
        predicted = None if prediction is None else prediction.value
        gold = getattr(example, "label", None) if not isinstance(example, SpanExample) else example.answers
        if values is not None:
            is_wrong = values[i] is not None and values[i] < 100.0
        elif _builtin(example):
            is_wrong = predicted != gold
        else:  # no per-example value: wrong where the answer is not the gold (entity spans as a set)
            is_wrong = views.right(task, example, predicted) is False
        if is_wrong:
            wrong.append(i)
    if len(wrong) > count:
        wrong = sorted(np.random.default_rng(seed).choice(wrong, size=count, replace=False).tolist())
    shown = []
    for i in wrong:
        example, prediction = scored.examples[i], scored.predictions[i]
        gold = ([text for text, _ in example.answers or ()] if isinstance(example, SpanExample)
                else getattr(example, "label", None))
        predicted = None if prediction is None else prediction.value
        if _builtin(example):
            item = {"id": example.id, **_describe(task, example), "gold": _value_text(example, gold),
                    "prediction": _value_text(example, predicted)}
        else:
            item = {"id": example.id, **_describe(task, example), "gold": views.gold_text(task, example),
                    "prediction": views.value_text(task, example, predicted)}
        if isinstance(example, ClassificationExample):
            for key in ("gold", "prediction"):
                description = task.label_descriptions.get(item[key])
                if description:
                    item[key] = f"{item[key]} ({description})"
        said = _said(None if prediction is None else prediction.raw)
        if said:
            item["raw"] = _excerpt(said)
        if values is not None and values[i] is not None:
            item[metric] = values[i]
        shown.append(item)
    return shown
