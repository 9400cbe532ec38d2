"""What SuperCLUE-CPIFOpen's official evaluator does to an answer before its checker sees it.

The official ``superclue-evaluation.py`` builds Python source out of each answer
(``response = '<answer>'``) and ``exec``\\ s it together with the checker. These functions
reproduce the *value* that source would give ``response`` without building or executing any
code from the answer: the answer is turned into the same string literal and handed to a
literal parser (:func:`ast.literal_eval`, which parses and never executes), so an answer
that would make the evaluator run part of itself as code is a parse failure here.

The rules, in the evaluator's order (see docs/superclue.md, ``superclue-cpif``):

1. the answer is the text after the last ``</think>``, stripped (:func:`final_answer`);
2. newlines become the two characters ``\\n`` and single quotes ``\\'``; the evaluator's
   ``.replace('"', '\\"')`` replaces ``"`` by itself (``'\\"'`` *is* ``'"'``), so nothing else
   is escaped: ``\\t`` or ``\\\\`` written in an answer are read as escapes (:func:`escaped`);
3. the literal is tried single-quoted first, then double-quoted (:func:`candidates`); in
   the double-quoted form an unescaped ``"`` of the answer ends the literal early, which
   the evaluator meets as a SyntaxError;
4. checker source whose ``{`` and ``}`` counts differ loses ``}`` at both ends first
   (:func:`checker_source`).
"""

from __future__ import annotations

import ast
import warnings
from dataclasses import dataclass

THINK_END = "</think>"


@dataclass(frozen=True, slots=True)
class Candidate:
    """One quoting of the answer: the value Python would make of it, or why it would not parse."""

    quote: str
    value: str | None
    error: str | None = None


def final_answer(text: str) -> str:
    """The evaluator's ``answer.split("</think>")[-1].strip()``: a reasoning model's visible answer."""
    return text.split(THINK_END)[-1].strip()


def escaped(answer: str) -> str:
    """The evaluator's two effective replacements (its ``'"' -> '\\"'`` one is a no-op)."""
    return answer.replace("\n", "\\n").replace("'", "\\'")


def parse_literal(text: str, quote: str) -> Candidate:
    """``text`` between ``quote``\\ s as a Python string literal, parsed, never executed.

    Anything that is not a string literal (the answer closed the quote early and went on
    with something else, or the literal is malformed: a lone backslash at the end, ``\\x4``, a NUL, a
    carriage return that the tokenizer reads as a line break) is an error, as the
    evaluator's ``exec`` would raise SyntaxError (or ValueError for a NUL) for it.
    """
    source = quote + text + quote
    try:
        with warnings.catch_warnings():  # '\\d' warns (DeprecationWarning, SyntaxWarning in 3.12): only a warning
            warnings.simplefilter("ignore")
            tree = ast.parse(source, mode="eval")
    except (SyntaxError, ValueError) as error:
        return Candidate(quote, None, f"{type(error).__name__}: {error}")
    body = tree.body
    # 'a' "b" (implicit concatenation) is one literal to Python, so to the evaluator too;
    # anything else ('a' + x, a call, a second statement) would be code there, and is refused
    if not (isinstance(body, ast.Constant) and isinstance(body.value, str)):
        return Candidate(quote, None, "SyntaxError: the quoted answer is not a string literal")
    return Candidate(quote, ast.literal_eval(body))


def candidates(answer: str) -> tuple[Candidate, Candidate]:
    """The single-quoted, then the double-quoted reading of ``answer`` (already :func:`final_answer`)."""
    text = escaped(answer)
    return parse_literal(text, "'"), parse_literal(text, '"')


def checker_source(code: str) -> str:
    """The evaluator's brace repair: ``code.strip("}")`` when the counts of ``{`` and ``}`` differ."""
    if code.count("{") != code.count("}"):
        return code.strip("}")
    return code
