"""Likelihood through vLLM's ``prompt_logprobs``: the requests to send and how its answers are read.

Shapes followed: vLLM 0.33.0 (``vllm/outputs.py``, ``vllm/logprobs.py``,
``vllm/sampling_params.py``, ``vllm/v1/engine/logprobs.py``), which keep the shapes of
earlier releases: ``LLM.generate`` returns one ``RequestOutput`` per prompt, in order, with
``prompt_token_ids`` and ``prompt_logprobs``, a list whose first item is ``None`` (nothing
predicts the first token) and whose others map token ids to ``Logprob`` objects
(``.logprob``, ``.rank``, ``.decoded_token``); the token actually in the prompt is always
among them, whatever ``prompt_logprobs=k`` asks for beyond it. ``FlatLogprobs`` reads the
same way (``len`` and ``[i]``).

Prefix caching. vLLM skips *reading* its prefix cache for a request that asks for prompt
log-probabilities unless ``skip_reading_prefix_cache=False`` says otherwise; then the
``num_cached_tokens`` tokens read from the cache get no log-probability, and neither does
the token right after them (its logits were computed by an earlier request). The list is
then ``None`` followed by one entry per token from position ``num_cached_tokens + 1``. So:

* the requests are ``prompt + choice`` token ids exactly as the transformers backend splits
  them (:func:`~clue_models_llm.scoring.encode_requests`), each example's choices side by
  side and examples sorted by their prompt tokens, so that the engine computes a shared
  prompt (an instruction, few-shot demos, a long reading passage) once and every later choice reads it;
* a request is read only from the positions it needs (its continuation; for ``ppl`` the
  first choice of an example also needs its prompt, and is sent with the cache unread);
* a request whose cached tokens reached into its continuation (vLLM caches whole blocks, so
  a prompt whose length is a multiple of the block size can be cached up to its last token)
  is asked again with the cache unread: :func:`read_scores` says which.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from clue_core.plugin import ClueError


@dataclass(frozen=True, slots=True)
class TokenRequest:
    """One ``prompt + choice`` as vLLM is asked it: token ids, and from which position they are read.

    ``fresh``: sent with the prefix cache unread, so every position after the first has its
    log-probability.
    """

    example: int
    choice: int
    ids: tuple[int, ...]
    prefix: int
    start: int
    fresh: bool = False


def token_requests(encoded: Sequence[Any], *, ppl: bool) -> list[TokenRequest]:
    """The requests of :class:`~clue_models_llm.scoring.ChoiceRequest` items, in the order prefix caching likes.

    Examples are sorted by their prefix tokens (ties in their original order), so examples
    sharing an instruction and demos follow each other; an example's choices are consecutive.
    """
    order = sorted(range(len(encoded)), key=lambda i: (encoded[i].prefix, i))
    requests = []
    for example in order:
        item = encoded[example]
        prefix = tuple(item.prefix)
        for choice, continuation in enumerate(item.continuations):
            first = ppl and choice == 0
            requests.append(TokenRequest(example, choice, prefix + tuple(continuation), len(prefix),
                                         1 if first else len(prefix), fresh=first))
    return requests


def sampling_kwargs(request: TokenRequest, *, caching: bool, fields: frozenset[str]) -> dict[str, Any]:
    """``SamplingParams`` arguments of a likelihood request: one greedy token, the prompt's log-probabilities.

    ``prompt_logprobs=0`` returns the prompt's own token only (no top-k); ``fields`` are the
    names this vLLM's ``SamplingParams`` takes, so ``skip_reading_prefix_cache`` is only
    passed where it exists.
    """
    kwargs: dict[str, Any] = {"n": 1, "max_tokens": 1, "temperature": 0.0, "prompt_logprobs": 0}
    if "detokenize" in fields:
        kwargs["detokenize"] = False
    if "skip_reading_prefix_cache" in fields:
        kwargs["skip_reading_prefix_cache"] = request.fresh or not caching
    return kwargs


def _logprob(value: Any) -> float:
    number = float(value.logprob)
    if math.isnan(number) or number > 0:
        raise ValueError(f"log-probability {number}")
    return number


def token_logprobs(output: Any, ids: Sequence[int]) -> list[float | None]:
    """The log-probability of every token of ``ids`` in ``output`` (a ``RequestOutput``), ``None`` where absent.

    Raises a :class:`ClueError` for an answer of another shape: other tokens than asked, no
    prompt log-probabilities, a list of the wrong length, a position without its own token.
    """
    asked = list(ids)
    echoed = getattr(output, "prompt_token_ids", None)
    if echoed is not None and list(echoed) != asked:
        raise ClueError(f"vLLM scored other tokens than asked ({len(echoed)} prompt tokens for {len(asked)} sent)")
    values = getattr(output, "prompt_logprobs", None)
    if values is None:
        raise ClueError("vLLM returned no prompt log-probabilities (prompt_logprobs was not honoured)")
    cached = int(getattr(output, "num_cached_tokens", None) or 0)
    if len(values) != len(asked) - cached:
        raise ClueError(f"vLLM returned {len(values)} prompt log-probabilities for {len(asked)} tokens with "
                        f"{cached} read from its prefix cache (expected {len(asked) - cached})")
    result: list[float | None] = [None] * len(asked)
    for k in range(1, len(values)):
        position = cached + k
        entry = values[k]
        token = asked[position]
        if entry is None or token not in entry:
            raise ClueError(f"vLLM's prompt log-probabilities at position {position} lack the prompt's own token "
                            f"{token}")
        try:
            result[position] = _logprob(entry[token])
        except (AttributeError, TypeError, ValueError) as exc:
            raise ClueError(f"vLLM's prompt log-probability at position {position} is not one a model gives "
                            f"({exc})") from None
    return result


@dataclass
class Scores:
    """What has been read so far of one call's requests: per request, its needed log-probabilities."""

    requests: Sequence[TokenRequest]
    values: dict[int, list[float | None]]

    def complete(self, index: int) -> bool:
        request, got = self.requests[index], self.values.get(index)
        return got is not None and all(v is not None for v in got[request.start:])

    def example_done(self, example: int, indices: Sequence[int]) -> bool:
        return all(self.complete(i) for i in indices)

    def entry(self, indices: Sequence[int], ppl: bool) -> dict[str, Any]:
        """The likelihood entry of one example from its requests (in choice order)."""
        logprobs, tokens = [], []
        prefix_logprob = prefix_tokens = None
        for index in indices:
            request = self.requests[index]
            got = self.values[index]
            logprobs.append(float(sum(v for v in got[request.prefix:] if v is not None)))
            tokens.append(len(request.ids) - request.prefix)
            if ppl and request.fresh:
                prefix_logprob = float(sum(v for v in got[1:request.prefix] if v is not None))
                prefix_tokens = request.prefix - 1
        return {"logprobs": logprobs, "tokens": tokens, "prefix_logprob": prefix_logprob,
                "prefix_tokens": prefix_tokens}


def read_scores(outputs: Sequence[Any], requests: Sequence[TokenRequest], indices: Sequence[int],
                scores: Scores) -> list[int]:
    """Read ``outputs`` (one per request of ``indices``) into ``scores``; the indices to ask again, cache unread."""
    if len(outputs) != len(indices):
        raise ClueError(f"vLLM answered {len(outputs)} of {len(indices)} requests")
    again = []
    for index, output in zip(indices, outputs):
        scores.values[index] = token_logprobs(output, requests[index].ids)
        if not scores.complete(index):
            if requests[index].fresh:
                raise ClueError("vLLM left positions of a request sent with its prefix cache unread without "
                                "log-probabilities")
            again.append(index)
    return again
