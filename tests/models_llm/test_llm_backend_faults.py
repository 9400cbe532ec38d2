"""A backend that misbehaves: answers no model gives are one line and never cached; what it did answer is kept.

Every backend's ``done`` reports go through the learner's check (the one the cache applies
when it reads an entry back), so a NaN, a positive log-probability, the wrong number of
scores, a text that is not text or an index nobody asked for stops the run with one line
naming the backend, and neither the cache nor the predictions see it. A backend that raises
(a crash, Ctrl-C) after some reports keeps those reports: the rerun asks only for the rest.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from clue_core.plugin import ClassificationExample, ClueError, RunContext
from clue_models_llm.backend import Done, GenerateOptions, ScoreRequest
from clue_models_llm.learner import LLMLearner
from clue_models_llm.settings import COMMON, complete
from tests.models_llm.test_llm_backends import EXAMPLES, FakeBackend

MORE = [*EXAMPLES, ClassificationExample("c", "花呗分期", "花呗账单", "1"),
        ClassificationExample("d", "借呗额度", "天气很好", "0")]


def learner_over(kernel, backend: FakeBackend, **values: Any) -> LLMLearner:
    return LLMLearner(kernel.task("afqmc"), backend, complete(COMMON, values), COMMON, "fake")


def fitted(kernel, backend: FakeBackend, cache: Path | None, **values: Any) -> LLMLearner:
    learner = learner_over(kernel, backend, **values)
    learner.fit([], [], RunContext(task=kernel.task("afqmc"), cache_dir=cache, echo=lambda text: None))
    return learner


def cached(folder: Path) -> int:
    files = list((folder / "llm").glob("*.sqlite"))
    if not files:
        return 0
    with sqlite3.connect(files[0]) as connection:
        return connection.execute("SELECT COUNT(*) FROM results").fetchone()[0]


class Scores(FakeBackend):
    """Reports ``entry(request)`` for every request, one report each."""

    def __init__(self, entry: Callable[[ScoreRequest], Any]) -> None:
        super().__init__(None, {}, "fake")
        self.entry = entry

    def score_choices(self, requests: Sequence[ScoreRequest], *, ppl: bool, done: Done) -> None:
        for index, request in enumerate(requests):
            done({index: self.entry(request)})


def entry(logprobs: list[float], tokens: list[int] | None = None) -> dict[str, Any]:
    return {"logprobs": logprobs, "tokens": tokens or [1] * len(logprobs), "prefix_logprob": None,
            "prefix_tokens": None}


@pytest.mark.parametrize(("answer", "shown"), [
    (lambda r: entry([math.nan, -1.0]), "nan"),
    (lambda r: entry([-1.0, math.inf]), "inf"),
    (lambda r: entry([-1.0, 2.5]), "2.5"),
    (lambda r: entry([-1.0]), "[-1.0]"),  # one score for two choices
    (lambda r: entry([-1.0, -2.0, -3.0]), "-3.0"),  # three
    (lambda r: entry([-1.0, -2.0], [1, -1]), "-1]"),  # a negative token count
    (lambda r: [-1.0, -2.0], "[-1.0, -2.0]"),  # not an entry at all
], ids=["nan", "inf", "positive", "too-few", "too-many", "negative-count", "not-a-mapping"])
def test_a_likelihood_no_model_gives_is_one_line_and_never_cached(kernel, tmp_path, answer, shown) -> None:
    learner = fitted(kernel, Scores(answer), tmp_path)
    with pytest.raises(ClueError) as caught:
        learner.predict(EXAMPLES)
    message = str(caught.value)
    assert "\n" not in message and message.startswith("fake: Scores.score_choices answered request 0")
    assert "wrong shape" in message and shown in message and "not cached" in message
    assert learner.cache is not None and learner.cache.written == 0 and cached(tmp_path) == 0


def test_ppl_needs_the_prompts_own_likelihood_too(kernel, tmp_path) -> None:
    learner = fitted(kernel, Scores(lambda r: entry([-1.0, -2.0])), tmp_path, score="ppl")
    with pytest.raises(ClueError, match=r"per choice, and the prompt's own"):
        learner.predict(EXAMPLES)
    assert cached(tmp_path) == 0


def test_an_answer_for_a_request_never_asked_is_named(kernel, tmp_path) -> None:
    class Beyond(FakeBackend):
        def score_choices(self, requests: Sequence[ScoreRequest], *, ppl: bool, done: Done) -> None:
            done({len(requests): entry([-1.0, -2.0])})

    learner = fitted(kernel, Beyond(None, {}, "fake"), tmp_path)
    with pytest.raises(ClueError, match=r"Beyond.score_choices answered request 2, but it was asked 2 requests"):
        learner.predict(EXAMPLES)
    assert cached(tmp_path) == 0


@pytest.mark.parametrize("bad", [
    {"text": 5, "tokens": 1, "finish": "stop"},
    {"text": "相同", "tokens": "1", "finish": "stop"},
    {"text": "相同", "tokens": 1},
    {"text": "相同", "tokens": 1, "finish": "stop", "reasoning": ["not", "text"]},
], ids=["text-not-text", "tokens-not-int", "no-finish", "reasoning-not-text"])
def test_a_generation_of_the_wrong_shape_is_one_line_and_never_cached(kernel, tmp_path, bad) -> None:
    class Writes(FakeBackend):
        def generate(self, prompts: Sequence[str], options: GenerateOptions, *, done: Done) -> None:
            done({index: dict(bad) for index in range(len(prompts))})

    learner = fitted(kernel, Writes(None, {}, "fake"), tmp_path, mode="generate")
    with pytest.raises(ClueError, match=r"^fake: Writes.generate answered request 0 with an entry of the wrong "
                                        r"shape \(expected text, tokens and finish"):
        learner.predict(EXAMPLES)
    assert cached(tmp_path) == 0


def test_good_answers_reported_with_a_bad_one_are_kept(kernel, tmp_path) -> None:
    """One report holding a good entry and a NaN: the good one is cached, the NaN is not."""

    class Mixed(FakeBackend):
        def score_choices(self, requests: Sequence[ScoreRequest], *, ppl: bool, done: Done) -> None:
            done({0: entry([-5.0, -1.0]), 1: entry([math.nan, -1.0])})  # 0: 相同

    with pytest.raises(ClueError, match="request 1"):
        fitted(kernel, Mixed(None, {}, "fake"), tmp_path).predict(EXAMPLES)
    assert cached(tmp_path) == 1
    again = fitted(kernel, FakeBackend(None, {}, "fake"), tmp_path)
    assert [p.value for p in again.predict(EXAMPLES)] == ["1", "0"]
    assert len(again.backend.scored) == 1 and again.run_info()["cache"]["hits"] == 1


@pytest.mark.parametrize("stop", [RuntimeError("the GPU fell off"), KeyboardInterrupt()], ids=["crash", "ctrl-c"])
@pytest.mark.parametrize("mode", ["loglikelihood", "generate"])
def test_a_backend_that_stops_mid_call_keeps_what_it_reported(kernel, tmp_path, stop, mode) -> None:
    """Two of four answered, then a crash or Ctrl-C: the two are cached and the rerun asks for the other two."""

    class Stops(FakeBackend):
        def score_choices(self, requests: Sequence[ScoreRequest], *, ppl: bool, done: Done) -> None:
            super().score_choices(requests[:2], ppl=ppl, done=done)
            raise stop

        def generate(self, prompts: Sequence[str], options: GenerateOptions, *, done: Done) -> None:
            super().generate(prompts[:2], options, done=done)
            raise stop

    with pytest.raises(type(stop)):
        fitted(kernel, Stops(None, {}, "fake"), tmp_path, mode=mode).predict(MORE)
    assert cached(tmp_path) == 2
    again = fitted(kernel, FakeBackend(None, {}, "fake"), tmp_path, mode=mode)
    assert [p.value for p in again.predict(MORE)] == ["1", "0", "1", "0"]
    asked = again.backend.scored if mode == "loglikelihood" else again.backend.generated
    assert len(asked) == 2 and again.run_info()["cache"]["hits"] == 2
