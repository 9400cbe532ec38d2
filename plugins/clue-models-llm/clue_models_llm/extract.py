"""Answers out of generated Chinese text (no torch here).

A reasoning model's ``<think>…</think>`` block is cut off first (the predictions keep the
whole generation). Then, in order, the first rule that finds something decides:

* classification: the whole answer is one of the label words; a label word right after
  「答案是」/「答案：」; the earliest label word anywhere (the longest where two start together);
* multiple choice: the whole answer is an option letter or an option's text; a letter after
  「答案是」/「选」/「答案：」; a letter opening the answer (``B.``, ``（B）``); the earliest
  option text; the first letter standing alone that names an option;
* span: the answer's first line, without a leading 「答案是」 and without quotes, brackets or
  punctuation at either end (the official metric ignores punctuation anyway).

Nothing found is ``None``: the example counts as wrong and is counted as unextracted.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Callable, Sequence
from typing import Any

from clue_core.plugin import ClueError

THINK_OPEN, THINK_CLOSE = "<think>", "</think>"
#: Characters stripped from both ends before an answer is compared as a whole.
EDGE = " \t\r\n\"'“”‘’「」『』《》〈〉()（）[]【】.,。，、:：;；!！?？*`"
ANSWER_IS = re.compile(r"(?:正确|正確|最终|最終)?答案(?:应该|應該|应|應)?(?:是|为|為)?\s*[:：]?\s*")
CHOOSE = re.compile(
    r"(?:答案|选项|選項|选择|選擇|应选|應選|选|選)(?:应该|應該|应|應)?(?:是|为|為)?\s*[:：]?\s*"
    r"[「“\"'『(（【\[]?\s*([A-Z])(?![A-Za-z])"
)
LEADING_LETTER = re.compile(r"^\s*[「“\"'『(（【\[]?\s*([A-Z])\s*(?:[).）．.、:：,，】\]」”\"'\s]|$)")
LONE_LETTER = re.compile(r"(?<![A-Za-z])([A-Z])(?![A-Za-z])")


def split_thinking(text: str) -> tuple[str | None, str]:
    """``(thinking, answer)``: the text after the last ``</think>``; an unfinished block leaves no answer.

    A generation that never opens a block is all answer (thinking ``None``).
    """
    if THINK_CLOSE in text:
        thinking, _, answer = text.rpartition(THINK_CLOSE)
        return thinking.replace(THINK_OPEN, "", 1).strip(), answer
    if text.lstrip().startswith(THINK_OPEN):
        return text.lstrip()[len(THINK_OPEN):].strip(), ""
    return None, text


def _clean(text: str) -> str:
    return text.strip(EDGE)


def _earliest(text: str, words: Sequence[str]) -> int | None:
    """Index of the word found first in ``text`` (the longest of those starting together)."""
    best: tuple[int, int, int] | None = None
    for index, word in enumerate(words):
        if not word:
            continue
        at = text.find(word)
        if at >= 0 and (best is None or (at, -len(word)) < best[:2]):
            best = (at, -len(word), index)
    return None if best is None else best[2]


def _starting(text: str, words: Sequence[str]) -> int | None:
    """Index of the longest word ``text`` starts with."""
    found = [(len(word), -i) for i, word in enumerate(words) if word and text.startswith(word)]
    return -max(found)[1] if found else None


def extract_label(answer: str, words: Sequence[str]) -> int | None:
    """Which label word the answer gives (its index), or None."""
    core = _clean(answer)
    if core in words:
        return list(words).index(core)
    for match in ANSWER_IS.finditer(answer):
        if match.end() == match.start():
            continue
        found = _starting(_clean(answer[match.end():]), words)
        if found is not None:
            return found
    return _earliest(answer, words)


def extract_choice(answer: str, choices: Sequence[str], letters: Sequence[str]) -> int | None:
    """Which option the answer picks (its index), or None."""
    core = _clean(answer)
    if core in letters:
        return list(letters).index(core)
    if core in choices:
        return list(choices).index(core)
    for match in CHOOSE.finditer(answer):
        if match.group(1) in letters:
            return list(letters).index(match.group(1))
    match = LEADING_LETTER.match(answer)
    if match and match.group(1) in letters:
        return list(letters).index(match.group(1))
    found = _earliest(answer, choices)
    if found is not None:
        return found
    for match in LONE_LETTER.finditer(answer):
        if match.group(1) in letters:
            return list(letters).index(match.group(1))
    return None


def extract_span(answer: str) -> str | None:
    """The answer text of a span question: its first line, cleaned; None when empty."""
    lines = [line for line in answer.strip().splitlines() if line.strip()]
    if not lines:
        return None
    text = lines[0].strip()
    match = ANSWER_IS.match(text)
    if match and match.end() > 0:
        text = text[match.end():]
    text = text.strip(EDGE)
    return text or None


def cut_at_stop(text: str, stops: Sequence[str]) -> str:
    """``text`` up to the first stop string found after its first non-blank character."""
    start = len(text) - len(text.lstrip())
    cut = len(text)
    for stop in stops:
        at = text.find(stop, start + 1)
        if at >= 0:
            cut = min(cut, at)
    return text[:cut]


TRADITIONAL_CONFIG = "s2tw"


def traditional_converter() -> Callable[[str], str]:
    """Simplified → Traditional (Taiwan) characters with OpenCC, imported only when asked for."""
    try:
        import opencc
    except ImportError:
        raise ClueError("setting 'traditional' needs OpenCC: pip install opencc-python-reimplemented "
                        "(or opencc)") from None
    for config in (TRADITIONAL_CONFIG, f"{TRADITIONAL_CONFIG}.json"):
        try:
            return opencc.OpenCC(config).convert
        except Exception:  # the two OpenCC packages name their configurations differently
            continue
    raise ClueError(f"setting 'traditional': OpenCC has no {TRADITIONAL_CONFIG} conversion")


TOOL_CALL_BLOCK = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.S)


def extract_tool_calls(text: str) -> list[dict[str, Any]]:
    """Tool calls a model wrote as text: ``<tool_call>{…}</tool_call>`` blocks (Qwen, Hermes), else
    the first JSON object with a ``name`` (and ``arguments`` or ``parameters``)."""
    blocks = TOOL_CALL_BLOCK.findall(text)
    candidates: list[Any] = []
    decoder = json.JSONDecoder()
    for block in blocks:
        try:
            candidates.append(json.loads(block))
        except json.JSONDecodeError:
            continue
    if not blocks:
        for start in (i for i, char in enumerate(text) if char == "{"):
            try:
                value, _ = decoder.raw_decode(text, start)
            except json.JSONDecodeError:
                continue
            if isinstance(value, dict) and "name" in value:
                candidates.append(value)
                break
    calls = []
    for value in candidates:
        if not isinstance(value, dict) or not isinstance(value.get("name"), str):
            continue
        arguments = value.get("arguments", value.get("parameters", {}))
        if isinstance(arguments, str):
            with contextlib.suppress(json.JSONDecodeError):
                arguments = json.loads(arguments)
        calls.append({"name": value["name"], "arguments": arguments})
    return calls
