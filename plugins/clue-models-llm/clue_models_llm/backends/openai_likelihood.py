"""Likelihood through an OpenAI-compatible completions endpoint: the requests, the probe, reading the echo.

A request asks the server to echo ``prompt + choice`` with every token's log-probability
(``echo`` and ``logprobs``, one token generated). Servers take that request in one of two
shapes, and this module sends whichever the server takes:

* a list of prompts, one per choice, in one request (vLLM, SGLang, the OpenAI API);
* one prompt per request (llama.cpp's ``llama_cpp.server`` answers a list of more than one
  prompt with a 500 from an ``assert``): each choice in its own request, sent concurrently,
  and the answers put back together per example.

The probe (``mode=auto`` and ``mode=loglikelihood`` alike) asks in the shape the run
sends, a list of two prompts; where that is refused (a 4xx, or a 5xx that repeats itself)
or answered for fewer prompts than it held, it asks again with one prompt, and where that
one works the server is remembered as taking one prompt per request. The answer is kept
under the probe's old key (an entry without ``one_prompt`` means lists), and a list refused
during the run, after a remembered answer, switches the rest of the run the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from clue_core.plugin import ClueError
from clue_models_llm.backend import Memo, ScoreRequest
from clue_models_llm.client import RepeatedError, RequestRefused, ServerClient, usage_of
from clue_models_llm.entries import probe_ok

#: The probe's prompt: short, and any tokenizer splits it into more than one token.
PROBE_PROMPT = "你好，世界"
#: The probe's list: two prompts, as a two-choice example sends them.
PROBE_PROMPTS = (PROBE_PROMPT, PROBE_PROMPT + "！")
#: The probe's key in the result cache (as it always was: entries remembered before lists were probed still count).
PROBE_REQUEST = {"kind": "probe", "probe": "echo+logprobs"}
#: What a server's refusal of the probe may mean about echo or lists, rather than about the run as a whole.
REFUSALS = (400, 404, 422)
#: What reading an answer of an unexpected shape raises (a field missing, a text that is a number…).
SHAPE_ERRORS = (AttributeError, TypeError, ValueError, KeyError, IndexError, ArithmeticError)
_COMMON = {"max_tokens": 1, "temperature": 0, "echo": True, "logprobs": 1}


def likelihood_body(question: ScoreRequest) -> dict[str, Any]:
    """One request for every choice of ``question``: a list of prompts."""
    return {"prompt": [question.prompt + choice for choice in question.choices], **_COMMON}


def single_bodies(question: ScoreRequest) -> list[dict[str, Any]]:
    """One request per choice of ``question``, for servers that take one prompt per request."""
    return [{"prompt": question.prompt + choice, **_COMMON} for choice in question.choices]


def _spans(offsets: Sequence[int], length: int) -> list[tuple[int, int]]:
    """``(start, end)`` of every token from its offset and the next token's."""
    return [(start, offsets[i + 1] if i + 1 < len(offsets) else length) for i, start in enumerate(offsets)]


def likelihood_entry(choices: Sequence[Any], question: ScoreRequest, usage: dict[str, int]) -> dict[str, Any]:
    """The local scorer's entry (``logprobs``, ``tokens``, ``prefix_*``) from one echoed choice per continuation.

    The echoed tokens' character offsets say which tokens belong to the choice (a token that
    straddles the boundary belongs to the choice, as the local scorer decides); the first
    token's ``null`` log-probability (no server scores the very first prompt token) is left out.
    """
    rows = []
    for choice, continuation in zip(choices, question.choices):
        whole = question.prompt + continuation
        logprobs = choice.logprobs
        offsets = getattr(logprobs, "text_offset", None) if logprobs is not None else None
        values = getattr(logprobs, "token_logprobs", None) if logprobs is not None else None
        if not offsets or values is None or len(offsets) != len(values):
            raise ClueError("the server's completions did not echo the prompt's token log-probabilities "
                            "(echo + logprobs); score with --set mode=generate")
        spans = _spans(list(offsets), len(choice.text or ""))
        inside = [i for i, (start, _) in enumerate(spans) if start < len(whole)]  # the generated token is not
        prompt_part = sum(1 for i in inside if spans[i][1] <= len(question.prompt))
        rows.append((list(values[:len(inside)]), prompt_part))
    shared = min(min(part for _, part in rows), min(len(values) for values, _ in rows) - 1)
    shared = max(shared, 0)
    first, _ = rows[0]
    prefix = [v for v in first[:shared] if v is not None]
    logprobs, tokens = [], []
    for values, _ in rows:
        continuation = values[shared:]
        logprobs.append(float(sum(v for v in continuation if v is not None)))
        tokens.append(sum(1 for v in continuation if v is not None))
    return {"logprobs": logprobs, "tokens": tokens, "prefix_logprob": float(sum(prefix)),
            "prefix_tokens": len(prefix), "usage": usage}


def parse_likelihood(response: Any, question: ScoreRequest) -> dict[str, Any]:
    """The entry from one completion that echoed every choice's prompt (a list of prompts)."""
    choices = sorted(response.choices, key=lambda c: c.index)
    if len(choices) != len(question.choices):
        raise ClueError(f"the server answered {len(choices)} of {len(question.choices)} prompts of one request")
    return likelihood_entry(choices, question, usage_of(response))


def parse_split(responses: Sequence[Any], question: ScoreRequest) -> dict[str, Any]:
    """The entry from one completion per choice (one prompt per request), usage summed over them."""
    choices = []
    for response in responses:
        if not response.choices:
            raise ClueError("the server answered a prompt with no choices")
        choices.append(min(response.choices, key=lambda c: c.index))
    usages = [usage_of(response) for response in responses]
    usage = {name: sum(u[name] for u in usages) for name in usages[0]}
    return likelihood_entry(choices, question, usage)


def probe_answer(response: Any) -> dict[str, Any]:
    """What the probe's answer says: whether every prompt came back with its token log-probabilities."""
    choices = list(response.choices or [])
    for choice in choices:
        logprobs = choice.logprobs
        values = getattr(logprobs, "token_logprobs", None) if logprobs is not None else None
        offsets = getattr(logprobs, "text_offset", None) if logprobs is not None else None
        echoed = (choice.text or "").startswith(PROBE_PROMPT)
        if not (echoed and values and offsets and len(values) == len(offsets)):
            break
    else:
        if choices:
            return {"capable": True, "why": "the server echoes prompt log-probabilities"}
    return {"capable": False, "why": "its completions ignore echo/logprobs (no prompt log-probabilities came back)"}


def lists_refused(exc: RequestRefused) -> bool:
    """Whether refusing the list probe may be about the list (then one prompt is tried), not the run."""
    return not exc.unserved and (exc.status in REFUSALS or isinstance(exc, RepeatedError))


def probe(client: ServerClient, memo: Memo, read: Callable[..., dict[str, Any]]) -> dict[str, Any]:
    """``{capable, why, one_prompt}``: asked in the run's shape, then with one prompt; a real answer remembered.

    ``read(parse, valid, response)`` reads an answer, one line naming the server where it is
    of another shape. Refusals are not remembered (a model loading, a proxy in between).
    """
    known = memo.recall(PROBE_REQUEST, probe_ok)
    if known is not None:
        return {**known, "one_prompt": bool(known.get("one_prompt"))}
    listed = {"prompt": list(PROBE_PROMPTS), **_COMMON}
    refused = ""
    try:
        response = client.call("completions", listed)
    except RequestRefused as exc:
        if not lists_refused(exc):
            raise  # not serving the model, a key, a server that keeps failing: the run cannot go on anyway
        refused = f"a list of {len(PROBE_PROMPTS)} prompts is refused ({exc.status})"
    else:
        count = len(getattr(response, "choices", None) or [])
        if count == 0:
            return {"capable": False, "why": "its completions answered the probe with no choices", "one_prompt": False}
        if count != len(PROBE_PROMPTS):
            refused = f"a list of {len(PROBE_PROMPTS)} prompts is answered for {count}"
    if not refused:
        known = {**read(probe_answer, probe_ok, response), "one_prompt": False}
        memo.remember(PROBE_REQUEST, known)
        return known
    try:
        response = client.call("completions", {"prompt": PROBE_PROMPT, **_COMMON})
    except RequestRefused as exc:
        if exc.unserved or exc.status not in REFUSALS:
            raise
        return {"capable": False, "why": f"its completions endpoint refuses echo + logprobs ({exc.status})",
                "one_prompt": False}
    if not getattr(response, "choices", None):
        return {"capable": False, "why": "its completions answered the probe with no choices", "one_prompt": False}
    known = read(probe_answer, probe_ok, response)
    if known["capable"]:
        known = {"capable": True, "why": f"{known['why']}, one prompt per request ({refused})", "one_prompt": True}
    else:
        known = {**known, "one_prompt": False}
    memo.remember(PROBE_REQUEST, known)
    return known
