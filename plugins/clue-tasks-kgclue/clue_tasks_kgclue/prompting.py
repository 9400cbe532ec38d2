"""How a language model is asked a KgCLUE question and how its answer is read (``Prompt.render/parse/answer``).

A model plugin knows nothing of triples: it writes the question with :func:`render`, hands the
answer text to :func:`parse` and records the value (the kind's answer string, see
:mod:`clue_tasks_kgclue.triples`).

* **Closed book** (no ``--set kb``): the question alone, ``问题：…``.
* **With a knowledge base**: the question, then every candidate triple of its entity, one
  ``subject ||| predicate ||| object`` line each, in the knowledge file's order (all of them:
  leaving some out would hide the answer from the model without a word; a long list is the
  backend's to truncate, and it says so).

Reading the answer (the first line of it, as the run's stop string leaves it): a leading
``答案：`` is dropped, the text split on ``|||`` (with or without spaces around it) and each part
stripped. Three parts are the answer; two are subject and predicate with the object **missing**
(an empty string, scored as a wrong part, not malformed); one (no ``|||`` at all) or more than three
is **malformed**: predicted as three empty parts (``" |||  ||| "``, three wrong parts) and counted
by the model (its ``malformed`` total). The value is always well formed, so the metric's own
``malformed`` count stays for files written elsewhere.
"""

from __future__ import annotations

import re

from clue_tasks_kgclue.triples import KbqaExample, answer_text

#: The separator as models write it: three pipes, with or without white space around them.
_SEPARATOR = re.compile(r"\s*\|\|\|\s*")
_PREFIXES = ("答案：", "答案:", "答：")
#: The value of an answer that could not be read: three empty parts.
EMPTY = answer_text(("", "", ""))


def render(example: KbqaExample) -> str:
    """The question, and the knowledge base's candidate triples where the run has them."""
    text = f"问题：{example.question}"
    if not example.candidates:
        return text
    lines = "\n".join(answer_text(candidate) for candidate in example.candidates)
    return f"{text}\n知识库中的候选三元组（从中选出回答问题的一个，原样写出）：\n{lines}"


def parse(answer: str, example: KbqaExample) -> tuple[str, str | None]:
    """``(answer text, problem)``: three parts joined by ``' ||| '``; ``problem`` says why it is malformed."""
    line = next((part.strip() for part in answer.splitlines() if part.strip()), "")
    for prefix in _PREFIXES:
        if line.startswith(prefix):
            line = line[len(prefix):].strip()
    parts = _SEPARATOR.split(line)
    if len(parts) == 2:
        parts.append("")  # subject and predicate: the object is missing, a wrong part
    if len(parts) != 3:
        why = "no '|||' separator" if len(parts) == 1 else f"{len(parts)} parts on '|||', not 3"
        return EMPTY, f"expected 'subject ||| predicate ||| object', got {line[:80]!r}: {why}"
    return answer_text((parts[0], parts[1], parts[2])), None


def answer(example: KbqaExample) -> str:
    """The gold as a model should write it (few-shot demos): ``subject ||| predicate ||| object``."""
    return "" if example.answer is None else answer_text(example.answer)
