"""The ``kbqa_triple`` kind: a question answered by one knowledge-base triple (KgCLUE).

This docstring is the kind's contract. A model plugin recognises the kind by its name,
``"kbqa_triple"``, and reads examples by their fields; it never imports this plugin.

Example (:class:`KbqaExample`, a frozen dataclass):

* ``id`` — the file's ``id`` (an int, the line index in the official files);
* ``question`` — the question text, as in the file;
* ``answer`` — ``(subject, predicate, object)``, the gold triple as three strings exactly as the
  file has them (not normalised: the metric normalises), or None where the file has no answer
  (``test.json``);
* ``candidates`` — the knowledge base's triples ``(subject, predicate, object)`` for the
  question's entity, in the knowledge file's order, when the task's ``kb`` setting names a
  ``Knowledge.txt``; ``()`` without one. A subject keeps its disambiguation (``刘晓华（广东工业大学教授）``).

Prediction value: the answer text ``"subject ||| predicate ||| object"`` (a string, the parts joined
by :data:`SEPARATOR`, a space, three pipes and a space), as the leaderboard file holds it. A part a
model could not produce is an empty string (``"刘晓华 ||| 主讲课程 ||| "``), scored as a wrong part;
:func:`answer_text` builds the value from three parts. Any string is accepted as a value (so a
user's file is scored, never refused, for an odd answer); one that does not split into exactly three
parts on the separator is *malformed*: the official script crashes on it, this plugin scores it as
three wrong parts and counts it (the metric's ``malformed`` total).

Gold (``gold_of``): the answer text of ``answer``, or None.

Prompt fields: ``question`` and ``candidates`` (a model that shows candidates formats them itself,
e.g. one ``subject ||| predicate ||| object`` line each; they are empty without a knowledge base).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

#: The separator of the three parts of an answer, exactly as the official files and scorer use it.
SEPARATOR = " ||| "
#: A triple: (subject, predicate, object).
Triple = tuple[str, str, str]


@dataclass(frozen=True, slots=True)
class KbqaExample:
    """One KgCLUE question (see the module docstring for each field's meaning)."""

    id: int | str
    question: str
    answer: Triple | None = None
    candidates: tuple[Triple, ...] = ()


def answer_text(parts: Triple) -> str:
    """The answer string of a triple, as the files and the leaderboard hold it."""
    return SEPARATOR.join(parts)


def split_answer(text: str) -> Triple | None:
    """The three parts of an answer string, or None when it does not split into exactly three.

    Split as the official scorer does (``text.split(' ||| ')``), with nothing stripped or normalised.
    """
    parts = text.split(SEPARATOR)
    if len(parts) != 3:
        return None
    return parts[0], parts[1], parts[2]


def why_malformed(text: str) -> str:
    """In words, why ``text`` is no ``subject ||| predicate ||| object`` answer (it is malformed)."""
    if SEPARATOR not in text:
        hint = " ('|||' needs a space each side)" if "|||" in text else ""
        return f"expected 'subject ||| predicate ||| object', got {text!r}: no ' ||| ' separator{hint}"
    return (f"expected 'subject ||| predicate ||| object', got {text!r}: "
            f"{len(text.split(SEPARATOR))} parts on ' ||| ', not 3")


def gold(example: KbqaExample) -> str | None:
    """The gold value a run records beside each prediction: the answer text, or None."""
    return None if example.answer is None else answer_text(example.answer)


def _is_triple(value: Any) -> bool:
    return isinstance(value, tuple) and len(value) == 3 and all(isinstance(part, str) for part in value)


def check_example(task: Any, example: KbqaExample) -> tuple[str, str] | None:
    """``(field, message)`` for an example that breaks the contract (a reader's bug), or None."""
    if not isinstance(example.question, str):
        return "question", f"expected a string, got {type(example.question).__name__}"
    if example.answer is not None and not _is_triple(example.answer):
        return "answer", f"expected three strings (subject, predicate, object), got {example.answer!r}"
    if not isinstance(example.candidates, tuple) or not all(_is_triple(c) for c in example.candidates):
        return "candidates", "expected a tuple of (subject, predicate, object) string triples"
    return None


def check_prediction(task: Any, example: KbqaExample, value: Any) -> str | None:
    """What is wrong with a prediction value: anything but a string (see the module docstring)."""
    if not isinstance(value, str):
        return f"expected an answer string 'subject ||| predicate ||| object', got {type(value).__name__}"
    return None
