"""The backend protocol: a fake backend plugs into LLMLearner, the real backends conform (five methods), every
model name comes from a backend's declaration, no hidden fit, and the result cache's keys are the ones earlier
versions wrote (pinned)."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from clue_core.plugin import ClassificationExample, ClueError, RunContext
from clue_models_llm import backend as backend_module
from clue_models_llm.backend import (
    REGISTRY,
    Backend,
    BackendInfo,
    Description,
    Done,
    GenerateOptions,
    Memo,
    ScoreRequest,
    create_backend,
    declared,
)
from clue_models_llm.backends.openai import OpenAIBackend
from clue_models_llm.backends.transformers import TransformersBackend
from clue_models_llm.factory import create
from clue_models_llm.learner import LLMLearner
from clue_models_llm.settings import COMMON, complete

create_tiny = create.llm_tiny
create_server = create.openai

EXAMPLES = [ClassificationExample("a", "花呗怎么还款", "花呗如何还钱", "1"),
            ClassificationExample("b", "借呗能提前还吗", "今天天气好", "0")]


class FakeBackend:
    """A backend in a few lines (no subclassing: the protocol is structural). It likes the choice
    "相同" when both sentences share their first character, and says so when asked to generate."""

    def __init__(self, argument: str | None, values: Mapping[str, Any], name: str) -> None:
        self.argument = argument
        self.values = dict(values)
        self.loaded = False
        self.scored: list[ScoreRequest] = []
        self.generated: list[str] = []
        self.options: GenerateOptions | None = None

    def load(self, context: RunContext, texts: Callable[[], Sequence[str]]) -> None:
        self.loaded = True

    def describe(self) -> Description:
        return Description(identity={"source": "fake", "version": 1}, device="nowhere", dtype="none",
                           info={"fake": {"scored": len(self.scored)}})

    def likelihood_support(self, *, chat: bool, required: bool, memo: Memo) -> tuple[bool, str]:
        return True, "fake"

    @staticmethod
    def _same(prompt: str) -> bool:
        first, second = (line.split("：", 1)[1] for line in prompt.splitlines() if line.startswith("问题"))
        return first[0] == second[0]

    def score_choices(self, requests: Sequence[ScoreRequest], *, ppl: bool, done: Done) -> None:
        self.scored += requests
        for index, request in enumerate(requests):
            liked = "相同" if self._same(request.prompt) else "不同"
            done({index: {"logprobs": [-1.0 if c == liked else -5.0 for c in request.choices],
                          "tokens": [len(c) for c in request.choices], "prefix_logprob": None,
                          "prefix_tokens": None}})

    def generate(self, prompts: Sequence[str], options: GenerateOptions, *, done: Done) -> None:
        self.generated += prompts
        self.options = options
        done({i: {"text": "相同\n" if self._same(p) else "不同\n", "tokens": 3, "finish": "stop",
                  "thinking_tokens": 0, "truncated": 0} for i, p in enumerate(prompts)})



def fake_learner(kernel, **values: Any) -> LLMLearner:
    task = kernel.task("afqmc")
    return LLMLearner(task, FakeBackend(None, values, "fake"), complete(COMMON, values), COMMON, "fake")


def context(kernel, cache: Path | None) -> RunContext:
    return RunContext(task=kernel.task("afqmc"), cache_dir=cache, echo=lambda text: None)


# -- a fake backend plugs in --------------------------------------------------------------


def test_a_fake_backend_answers_by_likelihood_through_the_learner(kernel, tmp_path) -> None:
    learner = fake_learner(kernel)
    assert isinstance(learner.backend, Backend)
    learner.fit([], [], context(kernel, tmp_path))
    predictions = learner.predict(EXAMPLES)
    assert [p.value for p in predictions] == ["1", "0"]
    assert predictions[0].raw["prompt"].endswith("答案：") and predictions[0].raw["answer"] == "相同"
    info = learner.run_info()
    assert info["model"] == {"source": "fake", "version": 1}
    assert (info["device"], info["dtype"], info["fake"]) == ("nowhere", "none", {"scored": 2})
    assert info["prompt"] == {"template_sha256": info["prompt"]["template_sha256"], "prompts_sha256":
                              info["prompt"]["prompts_sha256"]}  # no chat template described: plain prompts
    assert "usage" not in info  # no prices declared, no bill
    # the answers were cached under the fake's identity: a second learner asks nothing
    again = fake_learner(kernel)
    again.fit([], [], context(kernel, tmp_path))
    assert [p.value for p in again.predict(EXAMPLES)] == ["1", "0"]
    assert again.backend.scored == [] and again.run_info()["cache"]["hits"] == 2


def test_a_fake_backend_generates_with_the_learners_decoding(kernel) -> None:
    learner = fake_learner(kernel, mode="generate", max_new_tokens=5, stop="\\n|。")
    learner.fit([], [], context(kernel, None))
    predictions = learner.predict(EXAMPLES)
    assert [p.value for p in predictions] == ["1", "0"]
    assert all(p.raw["extracted"] for p in predictions)
    assert learner.backend.options == GenerateOptions(max_new_tokens=5, thinking_tokens=2048, stops=("\n", "。"),
                                                      temperature=0.0, seed=42)


#: What this module declares, as a backend module does: the generic factory builds its learner.
BACKEND = BackendInfo("fake", "a fake", COMMON, FakeBackend, argument="anything: fake:<x>")


def test_registering_a_backend_is_one_entry(kernel, monkeypatch) -> None:
    monkeypatch.setattr(backend_module, "REGISTRY", (*REGISTRY, __name__))
    declared.cache_clear()
    try:
        task = kernel.task("afqmc")
        made = create_backend("fake", "x", complete(COMMON, {}), "fake:x")
        assert isinstance(made, FakeBackend) and made.argument == "x"
        learner = create.fake("x", task, {})
        assert learner.name == "fake:x" and isinstance(learner.backend, FakeBackend)
        learner.fit([], [], context(kernel, None))
        assert [p.value for p in learner.predict(EXAMPLES)] == ["1", "0"]
        with pytest.raises(ClueError, match=r"^model 'fake' needs anything: fake:<x>$"):
            create.fake(None, task, {})
    finally:
        declared.cache_clear()


def test_an_unknown_or_incomplete_backend_is_refused(monkeypatch) -> None:
    with pytest.raises(ClueError, match=r"no LLM backend 'nope'.*answers, gguf, llm, llm-tiny, openai, vllm"):
        create_backend("nope", None, {}, "m")
    monkeypatch.setattr(backend_module, "declared", lambda: (BackendInfo("half", "", (), HalfBackend),))
    with pytest.raises(TypeError, match="does not provide every method"):
        create_backend("half", None, {}, "m")


class HalfBackend:
    """Scores but cannot generate: not a Backend."""

    def __init__(self, *args: Any) -> None:
        pass

    def score_choices(self, requests: Sequence[ScoreRequest], *, ppl: bool, done: Done) -> None:
        pass


def test_a_backend_that_leaves_requests_unanswered_is_named(kernel) -> None:
    learner = fake_learner(kernel)
    learner.backend.score_choices = lambda requests, *, ppl, done: None  # type: ignore[method-assign]
    learner.fit([], [], context(kernel, None))
    with pytest.raises(RuntimeError, match=r"FakeBackend.score_choices reported no answer for 2 of 2"):
        learner.predict(EXAMPLES)


# -- the real backends conform, without loading a model ------------------------------------


def test_both_backends_conform_to_the_protocol_without_loading(kernel) -> None:
    task = kernel.task("afqmc")
    tiny = create_tiny(None, task, {})
    served = create_server("m", task, {"base_url": "http://127.0.0.1:9/v1"})
    assert isinstance(tiny.backend, TransformersBackend) and isinstance(tiny.backend, Backend)
    assert isinstance(served.backend, OpenAIBackend) and isinstance(served.backend, Backend)
    assert tiny.backend.model is None and served.backend.client is None  # nothing loaded, nothing connected
    classes = {info.family: info.backend_class().__name__ for info in declared()}
    assert classes == {"llm": "TransformersBackend", "llm-tiny": "TransformersBackend", "openai": "OpenAIBackend",
                       "vllm": "VLLMBackend", "gguf": "LlamaCppBackend", "answers": "RecordedBackend"}


def test_the_protocol_has_five_methods() -> None:
    methods = {name for name in vars(Backend) if not name.startswith("_") and callable(vars(Backend)[name])}
    assert methods == {"load", "describe", "likelihood_support", "score_choices", "generate"}


def test_the_backend_modules_do_not_shadow_the_packages_they_drive() -> None:
    code = ("import sys, clue_models_llm.backend, clue_models_llm.hooks; "
            "heavy = sorted(m for m in ('torch', 'transformers', 'openai') if m in sys.modules); "
            "import clue_models_llm.backends.openai, clue_models_llm.backends.transformers, openai, transformers; "
            "print(heavy, hasattr(openai, 'OpenAI'), hasattr(transformers, 'AutoTokenizer'))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[] True True"


# -- no hidden fit --------------------------------------------------------------------------


@pytest.mark.parametrize("make", [
    lambda task: create_tiny(None, task, {}),
    lambda task: create_server("m", task, {"base_url": "http://127.0.0.1:9/v1"}),
], ids=["llm-tiny", "openai"])
def test_predict_before_fit_says_to_call_fit_and_loads_nothing(kernel, make) -> None:
    learner = make(kernel.task("afqmc"))
    with pytest.raises(RuntimeError, match=r"call fit\(train, dev, context\) before predict"):
        learner.predict(EXAMPLES)
    assert getattr(learner.backend, "model", None) is None and getattr(learner.backend, "client", None) is None


# -- cache keys pinned: entries written before the backend protocol stay hits ---------------

#: Computed with clue-models-llm before the backend protocol (LLMLearner subclassed as ServerLearner),
#: for openai:tiny at http://127.0.0.1:9/v1 on afqmc and EXAMPLES[0].
PINNED_FILE = "1003e7448874a8dce8ab1f61eb2d2389.sqlite"
PINNED_GENERATE = "169b0ea2e77df986b0a72198747b614fb6a250a0dc54d99445e49bb53da124cb"
PINNED_PROBE_AUTO = "8dd44d4b453f7bc1c86d30fc3162ba0a003e6240540c7273be776bae87419291"
PINNED_LIKELIHOOD_AUTO = "7ac399abf745f6ffee5e0ad9bb1257c269b5eb2adaac4aa15f4de2bbcd59d908"
#: llm-tiny's settings that key results, as they were (generation-only ones left out of likelihood keys).
TINY_LIKELIHOOD_SETTINGS = {"mode": "loglikelihood", "shots": 0, "chat": False, "thinking": False, "dtype": "auto",
                            "revision": "", "tiny_hidden_size": 64, "tiny_num_layers": 2, "tiny_num_heads": 2,
                            "tiny_intermediate_size": 128}


def seed_cache(folder: Path, entries: Mapping[str, Any]) -> None:
    (folder / "llm").mkdir(parents=True)
    with sqlite3.connect(folder / "llm" / PINNED_FILE) as connection:
        connection.execute("CREATE TABLE results (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        connection.executemany("INSERT INTO results VALUES (?, ?)",
                               [(key, json.dumps(value, ensure_ascii=False)) for key, value in entries.items()])


def offline_server(kernel, **values: Any) -> LLMLearner:
    """openai:tiny at a port nothing listens on, never retried: any request that is not a cache hit fails."""
    return create_server("tiny", kernel.task("afqmc"), {"base_url": "http://127.0.0.1:9/v1", "retries": 0,
                                                        "timeout": 1.0, **values})


def test_generation_entries_cached_before_the_protocol_are_hits(kernel, tmp_path) -> None:
    seed_cache(tmp_path, {PINNED_GENERATE: {"text": "相同\n", "tokens": 2, "finish": "stop", "thinking_tokens": 0,
                                            "truncated": 0}})
    learner = offline_server(kernel, mode="generate")
    learner.fit([], [], context(kernel, tmp_path))
    [prediction] = learner.predict(EXAMPLES[:1])
    assert prediction.value == "1" and prediction.raw["generation"] == "相同\n"
    assert learner.run_info()["cache"]["path"].endswith(PINNED_FILE)


def test_probe_and_likelihood_entries_cached_before_the_protocol_are_hits(kernel, tmp_path) -> None:
    seed_cache(tmp_path, {PINNED_PROBE_AUTO: {"capable": True, "why": "the server echoes prompt log-probabilities"},
                          PINNED_LIKELIHOOD_AUTO: {"logprobs": [-4.0, -0.5], "tokens": [2, 2], "prefix_logprob": -9.0,
                                                   "prefix_tokens": 20}})
    learner = offline_server(kernel)  # mode=auto: the probe's remembered answer decides likelihood
    learner.fit([], [], context(kernel, tmp_path))
    [prediction] = learner.predict(EXAMPLES[:1])
    assert prediction.value == "1" and prediction.scores == (-4.0, -0.5)
    info = learner.run_info()
    assert info["decoding"]["mode"] == "loglikelihood" and "echoes prompt log-probabilities" in info["mode_note"]
    assert info["cache"]["hits"] == 2 and info["cache"]["misses"] == 0


def test_llm_tiny_keys_are_the_formula_they_always_were(kernel, tmp_path) -> None:
    """The key of a likelihood request: SHA-256 of ``[{"model": identity, "settings": …}, request]`` as sorted
    JSON, with the settings above; and one SQLite file per identity."""
    learner = create_tiny(None, kernel.task("afqmc"), {})
    learner.fit(EXAMPLES, [], context(kernel, tmp_path))
    [prediction] = learner.predict(EXAMPLES[:1])
    request = {"kind": "loglikelihood", "prompt": prediction.raw["prompt"],
               "choices": prediction.raw["continuations"], "ppl": False}
    text = json.dumps([{"model": learner.identity, "settings": TINY_LIKELIHOOD_SETTINGS}, request],
                      ensure_ascii=False, sort_keys=True)
    identity = json.dumps(learner.identity, sort_keys=True)
    assert set(learner.identity) == {"source", "sha256", "dtype"} and learner.identity["source"] == "llm-tiny"
    path = tmp_path / "llm" / f"{hashlib.sha256(identity.encode()).hexdigest()[:32]}.sqlite"
    with sqlite3.connect(path) as connection:
        keys = [row[0] for row in connection.execute("SELECT key FROM results")]
    assert keys == [hashlib.sha256(text.encode()).hexdigest()]


def test_recorded_answers_go_through_the_protocol(kernel, tmp_path) -> None:
    """answers:<file> is a backend like any other: the LLM learner itself, each prompt an Asked naming its
    question, the record's answer or 'missing' reported through done (no learner subclass, no private hook)."""
    path = tmp_path / "a.jsonl"
    path.write_text('{"id": "a", "answer": "相同"}\n{"id": "z", "answer": "不同"}\n', encoding="utf-8")
    learner = create.answers(str(path), kernel.task("afqmc"), {})
    assert type(learner) is LLMLearner and isinstance(learner.backend, Backend)
    learner.fit([], [], context(kernel, None))
    assert learner.description.computed is False
    first, second = learner.predict(EXAMPLES)
    assert (first.value, first.raw["answer"], first.raw["recorded"]) == ("1", "相同", {"line": 1, "record": 1,
                                                                                        "match": "id"})
    assert second.value is None and second.raw["missing"] is True and second.raw["recorded"] is None
    info = learner.run_info()
    assert "cache" not in info and list(info)[-1] == "recorded"
    assert {k: info["recorded"][k] for k in ("questions", "matched_by_id", "missing", "unmatched_records")} == {
        "questions": 2, "matched_by_id": 1, "missing": 1, "unmatched_records": 1}
