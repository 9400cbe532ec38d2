"""The shapes of result-cache entries, checked where they are read and where a server's answer is stored.

A cache entry comes back from disk, perhaps written by another version of this plugin or
changed by hand; a server's answer comes from a program we do not control. Anything the
learner reads from an entry is checked here first, so a wrong shape is a miss (computed
again) or one line, never a ``KeyError`` deep in scoring.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

#: How far above zero a summed log-probability may round (float32 sums of values ≤ 0).
LOGPROB_SLACK = 1e-3


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_count(value: Any) -> bool:
    return _is_int(value) and value >= 0


def _is_logprob(value: Any) -> bool:
    """A log-probability a model can give: finite and not above zero.

    JSON readers here accept ``NaN`` and ``Infinity``; a NaN would decide a prediction at
    random and then be written into predictions files that no strict JSON reader opens,
    and a positive value (a flipped sign bit, a server's bug) is no probability at all.
    """
    return (isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
            and value <= LOGPROB_SLACK)


def _optional(entry: Mapping[str, Any]) -> bool:
    """The fields either kind may carry: a prompt's truncation, the server's token usage."""
    truncated = entry.get("truncated", 0)
    usage = entry.get("usage")
    return _is_int(truncated) and (usage is None or (isinstance(usage, Mapping)
                                                      and all(_is_int(v) for v in usage.values())))


def likelihood_ok(entry: Any, choices: int, ppl: bool) -> bool:
    """One summed log-probability (finite, ≤ 0) and token count (≥ 0) per choice (and the prompt's, for ``ppl``)."""
    if not isinstance(entry, Mapping):
        return False
    logprobs, tokens = entry.get("logprobs"), entry.get("tokens")
    if not (isinstance(logprobs, list) and isinstance(tokens, list) and len(logprobs) == len(tokens) == choices):
        return False
    if not (all(_is_logprob(v) for v in logprobs) and all(_is_count(v) for v in tokens)):
        return False
    if ppl and not (_is_logprob(entry.get("prefix_logprob")) and _is_count(entry.get("prefix_tokens"))):
        return False
    return _optional(entry)


def generation_ok(entry: Any) -> bool:
    """Text, a token count and why it ended; reasoning and tool calls where a server gave them."""
    if not isinstance(entry, Mapping):
        return False
    if not (isinstance(entry.get("text"), str) and _is_int(entry.get("tokens"))
            and isinstance(entry.get("finish"), str) and _is_int(entry.get("thinking_tokens", 0))):
        return False
    reasoning, calls = entry.get("reasoning"), entry.get("tool_calls")
    if reasoning is not None and not isinstance(reasoning, str):
        return False
    if calls is not None and not (isinstance(calls, list) and all(isinstance(c, Mapping) for c in calls)):
        return False
    return _optional(entry)


def probe_ok(entry: Any) -> bool:
    """``mode=auto``'s remembered answer: whether the server echoes prompt log-probabilities, and why."""
    return isinstance(entry, Mapping) and isinstance(entry.get("capable"), bool) and isinstance(entry.get("why"), str)
