"""Check a tool-use question's expected call by code.

The model's calls come from ``raw["tool_calls"]`` (per turn, ``[{"name", "arguments"}]``,
recorded by the LLM learner when the question offers tools); where a model wrote its call
as text instead (no chat tools), the last turn's answer is searched for a JSON object
``{"name": ..., "arguments": {...}}`` (inside a code fence or not). Only the last turn's
calls count: that is where the question expects the call.

**Equal** means: the function names are the same string, and every expected argument is
present in the call with an equal value, where values are compared as JSON: numbers by
value (``3 == 3.0``, but not ``"3"``), strings after trimming surrounding whitespace,
lists element by element in order, objects by the same rule recursively. Extra arguments
in the call are allowed (optional parameters a model may fill). Arguments given as a JSON
string (as OpenAI's API returns them) are parsed first.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any


def calls_of(raw: Any, answer: str) -> list[dict[str, Any]]:
    """The calls of the last turn: recorded ones, else ones written in the answer's text."""
    if isinstance(raw, Mapping) and isinstance(raw.get("tool_calls"), list) and raw["tool_calls"]:
        last = raw["tool_calls"][-1]
        if isinstance(last, list):
            return [call for call in (_normal(c) for c in last) if call is not None]
    return written_calls(answer)


def written_calls(text: str) -> list[dict[str, Any]]:
    """Every ``{"name", "arguments"}`` JSON object written in ``text``, in order."""
    decoder = json.JSONDecoder()
    found = []
    index = text.find("{")
    while index != -1:
        try:
            value, end = decoder.raw_decode(text, index)
        except ValueError:
            index = text.find("{", index + 1)
            continue
        call = _normal(value)
        if call is not None:
            found.append(call)
        index = text.find("{", end)
    return found


def _normal(value: Any) -> dict[str, Any] | None:
    if not isinstance(value, Mapping):
        return None
    if isinstance(value.get("function"), Mapping):  # {"type": "function", "function": {...}}
        value = value["function"]
    name = value.get("name")
    arguments = value.get("arguments", {})
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except ValueError:
            return None
    if not isinstance(name, str) or not isinstance(arguments, Mapping):
        return None
    return {"name": name, "arguments": dict(arguments)}


def values_equal(expected: Any, got: Any) -> bool:
    """JSON equality as the module docstring defines it."""
    if isinstance(expected, bool) or isinstance(got, bool):
        return type(expected) is type(got) and expected == got
    if isinstance(expected, (int, float)):
        return isinstance(got, (int, float)) and float(expected) == float(got)
    if isinstance(expected, str):
        return isinstance(got, str) and expected.strip() == got.strip()
    if isinstance(expected, list):
        return isinstance(got, list) and len(expected) == len(got) and all(
            values_equal(e, g) for e, g in zip(expected, got))
    if isinstance(expected, Mapping):
        return isinstance(got, Mapping) and all(k in got and values_equal(v, got[k]) for k, v in expected.items())
    return expected == got


def call_matches(expected: Mapping[str, Any], call: Mapping[str, Any]) -> bool:
    return call.get("name") == expected["name"] and values_equal(expected.get("arguments", {}),
                                                                 call.get("arguments", {}))


def check_call(expected: Mapping[str, Any], calls: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """``{"expected", "called", "correct"}``: correct when any call of the last turn matches;
    ``called`` is the matching call, else the first one, else None."""
    matching = [call for call in calls if call_matches(expected, call)]
    called = matching[0] if matching else (calls[0] if calls else None)
    return {"expected": dict(expected), "called": dict(called) if called else None, "correct": bool(matching)}
