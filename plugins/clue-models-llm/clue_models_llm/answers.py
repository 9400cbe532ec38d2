"""Answers read into predictions, by example kind: the best-scored choice, or the answer extracted from text.

An answer that cannot be extracted counts as wrong: ``None`` for a classification, an
empty answer for a span and, since a multiple-choice decode step may insist on a valid
index, an index other than the gold one; unlabelled (test) examples get the first label or
choice, so the submission file stays valid. ``raw["extracted"]`` marks them.

An answer read from a record rather than generated (``answers:<file>``, see
:class:`~clue_models_llm.backend.Description`) may be ``missing``: scored as wrong, or the
placeholder on an unlabelled example, marked ``raw["missing"]``; a found one carries
``raw["recorded"]`` (where in the file), and an open question's texts are kept exactly as
recorded (no stripping of a ``<think>`` block or of white space: the task's metric decides).

A kind this plugin does not know is read by the task's own ``parse`` (:func:`parsed`,
:mod:`clue_models_llm.generic`): a malformed answer is scored as the value ``parse`` gives it,
marked ``raw["malformed"]``, and a question with no recorded answer gets ``parse("")``'s value.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from clue_core.plugin import CLASSIFICATION, SPAN, Example, Prediction
from clue_models_llm.extract import (
    cut_at_stop,
    extract_choice,
    extract_label,
    extract_span,
    extract_tool_calls,
    split_thinking,
)
from clue_models_llm.prompting import Asked
from clue_models_llm.prompts import Question, Renderer

if TYPE_CHECKING:
    from clue_models_llm.generic import TaskFunctions

#: ``ask(prompts) -> generation entries``: one turn of generation (cached) for open questions.
Ask = Callable[[list[str]], list[dict[str, Any]]]


def gold(example: Example) -> Any:
    """The example's gold answer, ``None`` for an unlabelled (test) example."""
    for name in ("label", "answers", "reference"):
        if hasattr(example, name):
            return getattr(example, name)
    from clue_core.plugin import gold_of  # a kind of another plugin's: its kind says where the gold is

    return gold_of(example)


def scored(examples: Sequence[Example], questions: Sequence[Question], entries: Sequence[Mapping[str, Any]],
           method: str) -> list[Prediction]:
    """The best choice by ``method`` (sum, mean, ppl); ties go to the first choice."""
    from clue_models_llm.scoring import ChoiceScores  # imports torch: only where something is scored

    predictions = []
    for example, question, entry in zip(examples, questions, entries):
        scores = ChoiceScores.of(dict(entry)).scores(method)
        best = max(range(len(scores)), key=lambda j: (scores[j], -j))
        raw = {"prompt": question.prompt, "continuations": list(question.choices),
               "logprobs": entry["logprobs"], "tokens": entry["tokens"], "score": method,
               "scores": list(scores), "answer": question.choices[best]}
        if method == "ppl":
            raw.update(prefix_logprob=entry["prefix_logprob"], prefix_tokens=entry["prefix_tokens"])
        if entry.get("truncated"):
            raw["truncated"] = entry["truncated"]
        if entry.get("usage"):
            raw["usage"] = [entry["usage"]]
        predictions.append(Prediction(example.id, question.values[best], tuple(scores), raw))
    return predictions


def asked(examples: Sequence[Example], questions: Sequence[Question]) -> list[Asked]:
    """Each question's prompt, knowing which example it asks (what a backend of recorded answers finds them by)."""
    return [Asked(question.prompt, id=example.id) for example, question in zip(examples, questions)]


def missing(kind: str, example: Example, question: Question, recorded: Any) -> Prediction:
    """No answer to this question: ``None`` where the example has gold (scored as wrong), else the placeholder."""
    value = "" if kind == SPAN else unextracted(kind, example, question)
    raw: dict[str, Any] = {"prompt": question.prompt, "generation": None, "answer": None, "missing": True,
                           "recorded": recorded}
    if value is not None:
        raw["placeholder"] = value
    return Prediction(example.id, value, None, raw)


def found(prediction: Prediction, generation: Mapping[str, Any]) -> Prediction:
    """A generated prediction, with where a recorded answer was found (``raw["recorded"]``) when it was read."""
    if "recorded" not in generation:
        return prediction
    return Prediction(prediction.id, prediction.value, prediction.scores,
                      {**(prediction.raw or {}), "recorded": generation["recorded"]})


def answer_text(generation: Mapping[str, Any], stops: Sequence[str]) -> tuple[str | None, str]:
    """``(thinking, answer)``: the think block apart, the answer cut at the first stop string."""
    thinking, answer = split_thinking(generation["text"])
    return thinking, cut_at_stop(answer, stops)


def generated_raw(prompt: str, generation: Mapping[str, Any]) -> dict[str, Any]:
    """What a generated prediction records of its prompt and generation."""
    raw = {"prompt": prompt, "generation": generation["text"], "finish": generation["finish"],
           "generated_tokens": generation["tokens"]}
    for name in ("thinking_tokens", "truncated", "reasoning"):
        if generation.get(name):
            raw[name] = generation[name]
    if generation.get("usage"):
        raw["usage"] = [generation["usage"]]
    return raw


def chosen(kind: str, examples: Sequence[Example], questions: Sequence[Question],
           generations: Sequence[Mapping[str, Any]], stops: Sequence[str]) -> list[Prediction]:
    """Classification or multiple choice answered by generation: the label or option the text names."""
    predictions = []
    for example, question, generation in zip(examples, questions, generations):
        if generation.get("missing"):
            predictions.append(missing(kind, example, question, generation.get("recorded")))
            continue
        _, answer = answer_text(generation, stops)
        if kind == CLASSIFICATION:
            index = extract_label(answer, question.choices)
        else:
            index = extract_choice(answer, question.choices, question.letters)
        raw = generated_raw(question.prompt, generation)
        raw["extracted"] = index is not None
        if index is not None:
            raw["answer"] = question.choices[index]
            value: Any = question.values[index]
        else:
            raw["answer"] = None
            value = unextracted(kind, example, question)
            raw["placeholder"] = value
        predictions.append(found(Prediction(example.id, value, None, raw), generation))
    return predictions


def unextracted(kind: str, example: Example, question: Question) -> Any:
    """No answer (None, scored as wrong) where the example has gold; where it has none (a test
    file), the first choice, so the submission file stays valid — flagged in ``raw``."""
    if gold(example) is not None:
        return None
    return question.values[0] if kind == CLASSIFICATION else 0


def spans(examples: Sequence[Example], questions: Sequence[Question], generations: Sequence[Mapping[str, Any]],
          stops: Sequence[str], convert: Callable[[str], str] | None) -> list[Prediction]:
    """Span questions: the answer's text (converted to Traditional characters where asked)."""
    predictions = []
    for example, question, generation in zip(examples, questions, generations):
        if generation.get("missing"):
            predictions.append(missing(SPAN, example, question, generation.get("recorded")))
            continue
        _, answer = answer_text(generation, stops)
        text = extract_span(answer)
        raw = generated_raw(question.prompt, generation)
        raw["extracted"] = text is not None
        raw["answer"] = text
        value = text or ""
        if text is not None and convert is not None:
            value = convert(text)
            raw["traditional"] = value
        predictions.append(found(Prediction(example.id, value, None, raw), generation))
    return predictions


def open_questions(examples: Sequence[Example], renderer: Renderer, ask: Ask,
                   stops: Sequence[str]) -> list[Prediction]:
    """Open questions turn by turn: each turn's prompt holds the earlier turns and the model's answers.

    A recorded answer keeps every turn's text as it is; a question with none (``missing``)
    is asked no further turn.
    """
    answers: list[list[str]] = [[] for _ in examples]
    raws: list[dict[str, Any]] = [{"prompts": [], "generations": [], "answers": answers[i]}
                                  for i in range(len(examples))]
    recorded: dict[int, Any] = {}
    gone: set[int] = set()
    for turn in range(max(len(e.turns) for e in examples)):  # type: ignore[union-attr]
        active = [i for i, e in enumerate(examples) if len(e.turns) > turn and i not in gone]  # type: ignore[union-attr]
        prompts = [renderer.turn_prompt(examples[i], answers[i]) for i in active]
        asked = [Asked(prompt, id=examples[i].id, text=examples[i].turns[0], turn=turn,  # type: ignore[union-attr]
                       turns=len(examples[i].turns)) for i, prompt in zip(active, prompts)]  # type: ignore[union-attr]
        for i, prompt, generation in zip(active, prompts, ask(asked) if asked else []):
            if "recorded" in generation:
                recorded[i] = generation["recorded"]
            if generation.get("missing"):
                gone.add(i)
                raws[i] = {"prompts": [], "generations": [], "answers": [], "missing": True, "recorded": recorded[i]}
                continue
            _, answer = answer_text(generation, stops)
            answers[i].append(generation["text"] if i in recorded else answer.strip())
            raw = raws[i]
            raw["prompts"].append(prompt)
            raw["generations"].append(generation["text"])
            if getattr(examples[i], "tools", ()):
                calls = generation.get("tool_calls") or extract_tool_calls(answer)
                raw.setdefault("tool_calls", []).append(calls)
            for name in ("reasoning", "usage"):
                if generation.get(name):
                    raw.setdefault(name, []).append(generation[name])
    return [_open_prediction(example, said, raw, i in gone, recorded.get(i, _NONE))
            for i, (example, said, raw) in enumerate(zip(examples, answers, raws))]


#: No ``recorded`` at all: the answers were generated.
_NONE = object()


def _open_prediction(example: Example, said: list[str], raw: dict[str, Any], gone: bool, recorded: Any) -> Prediction:
    """An open question's prediction: its last answer, what was asked and said (and where it was recorded)."""
    if gone:
        return Prediction(example.id, None, None, raw)
    if recorded is _NONE:
        return Prediction(example.id, said[-1] if said else "", None, {**raw, "extracted": bool(said)})
    calls = {"tool_calls": raw["tool_calls"]} if "tool_calls" in raw else {}
    ordered = {"prompts": raw["prompts"], "generations": raw["generations"], "answers": said, "extracted": True,
               "recorded": recorded, **calls}
    return Prediction(example.id, said[-1], None, ordered)


def parsed(examples: Sequence[Example], prompts: Sequence[str], generations: Sequence[Mapping[str, Any]],
           stops: Sequence[str], functions: TaskFunctions) -> list[Prediction]:
    """Generated answers read by the task's ``parse``; a malformed one scored as its value, marked and counted."""
    result = []
    for example, prompt, generation in zip(examples, prompts, generations):
        if generation.get("missing"):
            value, _ = functions.read("", example)
            raw: dict[str, Any] = {"prompt": prompt, "generation": None, "answer": None, "missing": True,
                                   "recorded": generation.get("recorded"), "placeholder": value}
            result.append(Prediction(example.id, value, None, raw))
            continue
        _, answer = answer_text(generation, stops)
        value, problem = functions.read(answer, example)
        raw = generated_raw(prompt, generation)
        raw["answer"] = answer
        raw["extracted"] = problem is None
        if problem is not None:
            raw["malformed"] = problem
        result.append(found(Prediction(example.id, value, None, raw), generation))
    return result
