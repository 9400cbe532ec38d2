"""Verifiable instructions (SuperCLUE's 精确指令遵循), checked by code on Chinese text.

Each constraint is ``{"type": NAME, ...parameters}``; :data:`TYPES` says which parameters
each type takes, and :func:`problem` checks a constraint's shape (the reader refuses
malformed ones with the file, line and field). Definitions, written for Chinese:

* **characters** are non-whitespace characters: a Han character, a letter, a digit and a
  punctuation mark count one each; spaces, tabs and newlines do not count;
* a **list item** is a line that starts, without indentation, with ``-``, ``*``, ``•`` or
  ``·`` and a space, or with a number marker (``1.``, ``1、``, ``1)``, ``(1)``, ``（1）``,
  ``①``); indented lines are sub-items and do not count;
* **numbered lines**: every non-empty line starts with ``N.`` or ``N、`` (also ``．``) and
  the numbers run 1, 2, 3… in order;
* a **title** is the first non-empty line when it is wholly a 《…》 title or a markdown
  heading (one to six ``#``, a space, text);
* **paragraphs** are the non-empty blocks separated by at least one blank line;
* words are matched as substrings (Chinese has no spaces between words);
* an empty (whitespace-only) answer fails every constraint: it followed no instruction.

Strict checks the answer as written; loose passes when the check passes on any of
IFEval's variants of it: the answer with its first line, its last line or both removed
(chatter such as "好的，以下是……"), each also with markdown removed (``**``, backticks
and the ``#`` of headings).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

_LATIN = re.compile(r"[A-Za-zＡ-Ｚａ-ｚ]")
_BULLET = re.compile(r"^[-*•·]\s+\S")
_NUMBER_ITEM = re.compile(r"^(?:\d+\s*[.、．)）]|[（(]\d+[)）]|[①-⑳])\s*\S")
_NUMBERED_LINE = re.compile(r"^(\d+)\s*[.、．]\s*\S")
_BOOK_TITLE = re.compile(r"^《[^《》]+》$")
_HEADING = re.compile(r"^#{1,6}\s+\S")
_HEADING_MARK = re.compile(r"^\s*#{1,6}\s*", re.MULTILINE)
_BLANK_LINES = re.compile(r"\n\s*\n")

Check = Callable[[str, Mapping[str, Any]], bool]


@dataclass(frozen=True, slots=True)
class ConstraintType:
    """One kind of verifiable instruction: its parameters and its check."""

    name: str
    check: Check
    description: str
    params: Mapping[str, str]  # name -> "int" (>= 0 or >= 1, see below), "text", "texts"
    optional: tuple[str, ...] = ()


def characters(text: str) -> int:
    """The number of non-whitespace characters (the definition every length limit uses)."""
    return sum(1 for char in text if not char.isspace())


def _lines(text: str) -> list[str]:
    return [line for line in text.strip().split("\n") if line.strip()]


def _list_items(text: str) -> int:
    return sum(1 for line in text.split("\n") if _BULLET.match(line) or _NUMBER_ITEM.match(line))


def _numbered(text: str, params: Mapping[str, Any]) -> bool:
    lines = _lines(text)
    numbers = []
    for line in lines:
        match = _NUMBERED_LINE.match(line.strip())
        if match is None:
            return False
        numbers.append(int(match.group(1)))
    if numbers != list(range(1, len(numbers) + 1)):
        return False
    return "value" not in params or len(numbers) == params["value"]


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def _title(text: str) -> bool:
    lines = _lines(text)
    if not lines:
        return False
    first = lines[0].strip()
    return bool(_BOOK_TITLE.match(first) or _HEADING.match(first))


def _ends_with_mark(text: str, params: Mapping[str, Any]) -> bool:
    marks = params.get("value", "。")
    stripped = text.rstrip()
    return bool(stripped) and stripped[-1] in marks


def _paragraphs(text: str) -> int:
    return len([block for block in _BLANK_LINES.split(text.strip()) if block.strip()])


TYPES: dict[str, ConstraintType] = {t.name: t for t in (
    ConstraintType("max_chars", lambda t, p: characters(t) <= p["value"],
                   "at most N characters (non-whitespace)", {"value": "int"}),
    ConstraintType("min_chars", lambda t, p: characters(t) >= p["value"],
                   "at least N characters (non-whitespace)", {"value": "int"}),
    ConstraintType("required_words", lambda t, p: all(w in t for w in p["words"]),
                   "every one of the words appears", {"words": "texts"}),
    ConstraintType("forbidden_words", lambda t, p: not any(w in t for w in p["words"]),
                   "none of the words appears", {"words": "texts"}),
    ConstraintType("json", lambda t, p: _is_json(t.strip()), "the whole answer is JSON that parses", {}),
    ConstraintType("list_items", lambda t, p: _list_items(t) == p["value"],
                   "a list of exactly N items (bulleted or numbered)", {"value": "int"}),
    ConstraintType("numbered_lines", _numbered, "every line numbered 1, 2, 3… (optionally exactly N lines)",
                   {"value": "int"}, optional=("value",)),
    ConstraintType("title", lambda t, p: _title(t), "the first line is a 《…》 title or a markdown heading", {}),
    ConstraintType("starts_with", lambda t, p: t.strip().startswith(p["value"]),
                   "the answer starts with the phrase", {"value": "text"}),
    ConstraintType("ends_with", lambda t, p: t.strip().endswith(p["value"]),
                   "the answer ends with the phrase", {"value": "text"}),
    ConstraintType("chinese_only", lambda t, p: _LATIN.search(t) is None,
                   "no Latin letters (half- or full-width)", {}),
    ConstraintType("no_commas", lambda t, p: "，" not in t and "," not in t, "no commas (，or ,)", {}),
    ConstraintType("end_punctuation", _ends_with_mark,
                   "the last character is one of the marks (default 。)", {"value": "text"}, optional=("value",)),
    ConstraintType("paragraphs", lambda t, p: _paragraphs(t) == p["value"],
                   "exactly N paragraphs separated by blank lines", {"value": "int"}),
)}


def known_types() -> str:
    return ", ".join(TYPES)


def problem(constraint: Any) -> tuple[str, str] | None:
    """``(field, message)`` for a malformed constraint (field relative to the constraint), else None."""
    if not isinstance(constraint, dict):
        return "", f"expected an object, got {type(constraint).__name__}"
    kind = constraint.get("type")
    if not isinstance(kind, str):
        return "type", "missing" if kind is None else f"expected a string, got {type(kind).__name__}"
    spec = TYPES.get(kind)
    if spec is None:
        return "type", f"unknown constraint type {kind!r} (known: {known_types()})"
    for name in constraint:
        if name != "type" and name not in spec.params:
            allowed = ", ".join(spec.params) or "none"
            return name, f"{kind} takes no parameter {name!r} (its parameters: {allowed})"
    for name, shape in spec.params.items():
        if name not in constraint:
            if name in spec.optional:
                continue
            return name, "missing"
        value = constraint[name]
        if shape == "int" and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            return name, f"expected a positive integer, got {value!r}"
        if shape == "text" and (not isinstance(value, str) or not value):
            return name, f"expected a non-empty string, got {value!r}"
        if shape == "texts" and (not isinstance(value, list) or not value
                                 or not all(isinstance(w, str) and w for w in value)):
            return name, f"expected a non-empty list of non-empty strings, got {value!r}"
    return None


def strip_markdown(text: str) -> str:
    """The text without bold marks, backticks and heading marks."""
    return _HEADING_MARK.sub("", text.replace("**", "").replace("`", ""))


def loose_variants(text: str) -> list[str]:
    """IFEval's loose variants: first/last line removed or not, markdown stripped or not."""
    lines = text.split("\n")
    cut = [text, "\n".join(lines[1:]), "\n".join(lines[:-1]), "\n".join(lines[1:-1])]
    variants = [v for base in cut for v in (base, strip_markdown(base))]
    return [v for v in dict.fromkeys(variants) if v.strip()]


def check_one(text: str, constraint: Mapping[str, Any]) -> dict[str, Any]:
    """``{"type", "strict", "loose"}`` for one constraint on one answer."""
    spec = TYPES[constraint["type"]]
    strict = bool(text.strip()) and spec.check(text, constraint)
    loose = strict or any(spec.check(variant, constraint) for variant in loose_variants(text))
    return {"type": spec.name, "strict": strict, "loose": loose}


def check_all(text: str, constraints: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Every constraint on the answer: ``{"strict": all strict, "loose": all loose, "checks": [...]}``."""
    checks = [check_one(text, c) for c in constraints]
    return {"strict": all(c["strict"] for c in checks), "loose": all(c["loose"] for c in checks), "checks": checks}
