"""Generation through vLLM, decoded by the rules of the transformers backend, in rounds.

vLLM decodes and checks stop strings itself; what it cannot be told directly is done by
asking again where the answer stands (the prompt's tokens followed by every token written
so far), so that ``vllm:`` and ``llm:`` follow the same rules
(:mod:`clue_models_llm.generation`):

* **Thinking.** A prompt ending inside ``<think>`` is first asked with ``thinking_tokens``
  and ``</think>`` as its stop string; when the budget is spent the block is closed for the
  model (``</think>`` written into its output) and the answer is asked for with its own
  ``max_new_tokens``. (A model that opens a think block itself, unprompted, thinks inside
  its answer's budget under ``vllm:``.)
* **Stop strings** end an answer only after its first non-blank character: a stop string
  vLLM found before it (an answer opening with the ``\\n`` that is also the stop) is not the
  end, and the answer is asked to go on.
* **Sampling.** Greedy unless ``temperature`` > 0; then each prompt's rounds draw with a seed
  of their own, from the run's seed and the prompt's tokens, so a batch never changes an answer.

Shapes followed: vLLM 0.33.0's ``CompletionOutput`` (``token_ids``, ``finish_reason``
``"stop"``/``"length"``/``"abort"``, ``stop_reason``: the stop string, a stop token id, or
``None`` at the end-of-sequence token).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from clue_core.plugin import ClueError
from clue_models_llm.backend import GenerateOptions
from clue_models_llm.extract import THINK_CLOSE, cut_at_stop


@dataclass
class Row:
    """One prompt being answered: its tokens, what has been written, where it stands."""

    prompt: list[int]
    thinking: bool
    ids: list[int] = field(default_factory=list)
    think_count: int = 0
    answer_count: int = 0
    rounds: int = 0
    finish: str = ""


def seed_of(seed: int, prompt: Sequence[int], round_: int) -> int:
    """A prompt's own sampling seed for one round (from the run's seed, its tokens and the round)."""
    digest = hashlib.sha256(f"{seed}:{list(prompt)}:{round_}".encode()).digest()
    return int.from_bytes(digest[:8], "little") % (1 << 63)


def round_kwargs(row: Row, options: GenerateOptions) -> dict[str, Any]:
    """``SamplingParams`` arguments of the row's next round (it is not finished)."""
    kwargs: dict[str, Any] = {"n": 1, "temperature": float(options.temperature), "include_stop_str_in_output": True,
                              "skip_special_tokens": False}
    if row.thinking:
        kwargs.update(max_tokens=options.thinking_tokens - row.think_count, stop=[THINK_CLOSE])
    else:
        kwargs.update(max_tokens=options.max_new_tokens - row.answer_count, stop=list(options.stops) or None)
    if options.temperature > 0:
        kwargs["seed"] = seed_of(options.seed, row.prompt, row.rounds)
    return kwargs


def close_spent(rows: Sequence[Row], options: GenerateOptions, close_ids: Sequence[int]) -> None:
    """Close the think block of every row whose thinking budget is spent (before anything is asked)."""
    for row in rows:
        if row.thinking and not row.finish and row.think_count >= options.thinking_tokens:
            row.ids += list(close_ids)
            row.thinking = False


def advance(row: Row, completion: Any, options: GenerateOptions, decode: Callable[[Sequence[int]], str],
            close_ids: Sequence[int]) -> None:
    """Take one round's ``CompletionOutput``: the tokens it wrote, and whether and why the row ends."""
    reason = getattr(completion, "finish_reason", None)
    if reason not in ("stop", "length"):
        raise ClueError(f"vLLM ended a generation with finish_reason {reason!r} (expected 'stop' or 'length')")
    new = [int(t) for t in completion.token_ids]
    row.ids += new
    row.rounds += 1
    stop_reason = getattr(completion, "stop_reason", None)
    if reason == "stop" and not isinstance(stop_reason, str):
        row.finish = "eos"
        return
    if row.thinking:
        row.think_count += len(new)
        if reason == "length" and THINK_CLOSE not in decode(row.ids):
            row.ids += list(close_ids)
        row.thinking = False
        return
    row.answer_count += len(new)
    if reason == "stop":
        answer = decode(row.ids).rpartition(THINK_CLOSE)[2]
        if cut_at_stop(answer, options.stops) != answer:
            row.finish = "stop"
            return
    if reason == "length" or row.answer_count >= options.max_new_tokens or not new:
        row.finish = "length"


def entry(row: Row, decode: Callable[[Sequence[int]], str], eos_ids: Sequence[int], truncated: int) -> dict[str, Any]:
    """The generation entry of a finished row (the text without its end-of-sequence tokens, as ``llm:``)."""
    text = decode([t for t in row.ids if t not in eos_ids])
    return {"text": text, "tokens": len(row.ids), "finish": row.finish, "thinking_tokens": row.think_count,
            "truncated": truncated}
