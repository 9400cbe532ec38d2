"""The LLM learner: ask every example of a task through the task's prompt, by example kind.

The learner holds a :class:`~clue_models_llm.backend.Backend` (transformers in process, an
OpenAI-compatible server…) and keeps to itself everything that decides what is asked and
how answers are read, so every backend gets the same prompts, cache and predictions.

``fit`` trains nothing: it draws the few-shot demos (``shots``, with the run's seed), has
the backend load its model (llm-tiny is built from the task's texts), joins the launcher's
process group, opens the result cache, settles the mode (``auto``: what the backend can
score) and the prompt style. ``predict`` answers this process's shard of the examples
(cached answers first), gathers every shard in the original order and returns one
:class:`Prediction` per example, with what was asked and what came back in ``raw``.
``predict`` before ``fit`` is an error: nothing is loaded behind the caller's back.

Classification and multiple choice are scored by likelihood (the best choice) or answered
by generation (the answer extracted from the text); span questions and open questions are
always generated (see :mod:`clue_models_llm.answers` for what an unextracted answer
becomes); ``raw["extracted"]`` marks them and ``run_info()`` counts them.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from clue_core.plugin import (
    CLASSIFICATION,
    MULTIPLE_CHOICE,
    SPAN,
    ClueError,
    Example,
    Prediction,
    RunContext,
    Setting,
    TaskSpec,
    write_json,
)
from clue_models_llm import answers, circular, generic, variants
from clue_models_llm.asking import Asker
from clue_models_llm.backend import Backend, Description, GenerateOptions, ScoreRequest
from clue_models_llm.cache import ResultCache, entry_key
from clue_models_llm.client import Usage
from clue_models_llm.distributed import ensure_group, gather, shard
from clue_models_llm.extract import TRADITIONAL_CONFIG, traditional_converter
from clue_models_llm.kinds import OPEN_QUESTION
from clue_models_llm.prompting import Prompting, prompting
from clue_models_llm.prompts import (
    Question,
    Renderer,
    check_shots,
    draw_demos,
    require_prompt,
    sha256,
    vocabulary_texts,
)
from clue_models_llm.protocols import Protocol
from clue_models_llm.protocols import load as load_protocol
from clue_models_llm.settings import COMMON, PROMPT_SCORES, Settings

#: Settings that only generation reads.
GENERATION_ONLY = frozenset({"max_new_tokens", "thinking_tokens", "stop", "temperature"})
#: What ``model_info["decoding"]`` may hold that is not a setting's name.
_DECODING_EXTRA = frozenset({"greedy"})
#: The local settings (:data:`COMMON`) by name, to tell which ones a model does not declare.
_COMMON_NAMES = frozenset(s.name for s in COMMON)


class LLMLearner:
    """One task's learner for a causal LM answering through ``backend``."""

    def __init__(self, task: TaskSpec, backend: Backend, values: Mapping[str, Any], declared: Sequence[Setting],
                 name: str) -> None:
        self.task = task
        self.backend = backend
        self.name = name
        self.declared = tuple(declared)
        # another framework's preset (protocol=opencompass:<config>) fixes the mode, score rule and decoding
        self.protocol: Protocol | None = load_protocol(task, str(values.get("protocol") or ""))
        if self.protocol is not None:
            self.protocol.check(values)
            values = {**values, **self.protocol.overrides(values)}
        self._use(values)
        self.prompt = require_prompt(task)
        self.convert = traditional_converter() if self.settings.traditional and task.kind == SPAN else None
        self.context: RunContext | None = None
        self.demos: list[Example] = []
        self.identity: dict[str, Any] = {}
        self.description = Description(identity={})
        self.cache: ResultCache | None = None
        self.renderer: Renderer | None = None
        self.prompting = Prompting()
        self.mode_note = ""
        self.asker: Asker | None = None
        self.prompts_digest = _Digest()
        self.usage = Usage()
        self.counts = {"examples": 0, "labelled": 0, "unextracted": 0, "unextracted_unlabelled": 0,
                       "truncated": 0, "malformed": 0}
        self.processes: list[dict[str, int]] = []
        #: why circular evaluation (``circular``) does not apply here, None where it does or is off
        self.circular_note = circular.skipped(task, preset=getattr(self, "protocol", None) is not None) \
            if circular.enabled(self.settings.circular) else None
        #: the metrics this learner adds to the task's (the kernel scores them beside them)
        self.extra_metrics: tuple[str, ...] = (circular.METRIC,) if self._circular_on() else ()
        # prompt_variants: the task's rewordings asked too, for the spread of its score (clue_models_llm.variants)
        self.spread = variants.Spread(task, self.settings.prompt_variants, preset=self.protocol is not None)
        self.extra_metrics += self.spread.metrics

    # -- setting up -----------------------------------------------------------------------

    def _use(self, values: Mapping[str, Any]) -> None:
        """The setting values answers are computed under, and the ones that key cached results."""
        self.values = dict(values)
        self.settings = Settings.of(self.values)
        self.key_settings = {s.name: self.values[s.name] for s in self.declared if s.cache_key}
        # what only generation reads does not key likelihood results
        self.likelihood_key_settings = {k: v for k, v in self.key_settings.items() if k not in GENERATION_ONLY}

    def check_plan(self, splits: Mapping[str, Sequence[Example]]) -> None:
        """At planning, before any task runs: few-shot demos this task's training split cannot give."""
        check_shots(splits.get("train", ()), self.settings.shots, self.task.name)
        if self.settings.shots and generic.is_generic(self.task.kind) and self.prompt.answer is None:
            raise ClueError(f"task {self.task.name}: shots={self.settings.shots} needs the gold answers written as "
                            f"a model should write them, and its prompt names no answer function "
                            f"(Prompt.answer); use shots=0")

    def fit(self, train: Sequence[Example], dev: Sequence[Example], context: RunContext) -> None:
        """Everything ``predict`` needs (nothing is trained); ``train`` gives the demos, ``dev`` llm-tiny's words."""
        self.context = context
        self.demos = draw_demos(train, self.settings.shots, context.seed, self.task.name)
        self.backend.load(context, lambda: vocabulary_texts(self.task, [*train, *dev])
                          + (self.protocol.texts() if self.protocol else []))
        self.description = self.backend.describe()
        self.identity = dict(self.description.identity)
        ensure_group(context.world_size)
        folder = context.cache_dir if self.settings.result_cache else None
        self.cache = ResultCache(folder, json.dumps(self.identity, sort_keys=True))
        self._resolve_mode()
        settings = self.settings
        self.prompting = prompting(self.description, chat=settings.chat,
                                   thinking=settings.thinking and settings.mode == "generate",
                                   thinking_setting=settings.thinking, name=self.name)
        self.renderer = Renderer(self.task, demos=self.demos, chat=self.prompting.chat,
                                 prefix_in_chat=self.prompting.prefix_in_chat)
        self.spread.fit(lambda worded: Renderer(worded, demos=self.demos, chat=self.prompting.chat,
                                                prefix_in_chat=self.prompting.prefix_in_chat),
                        computed=self.description.computed)
        if self.spread.note:
            self._echo(self.spread.note)
        if self.circular_note:  # asked for, not applied: said where the user looks, not only in model_info
            self._echo(f"{self.name}: circular={self.settings.circular} {self.circular_note}")
        if self.protocol is not None:  # asked as the preset renders it (same interface: render, skeleton)
            self.renderer = self.protocol  # type: ignore[assignment]
        self.asker = Asker(self.backend, self.cache, self._key, self._echo, self.name,
                           label=f"[{self.task.name}] {self.name}", shown=context.is_main,
                           split=lambda: getattr(context, "split", ""))

    def _resolve_mode(self) -> None:
        """The mode answers are computed in, before any request of the task is sent.

        ``auto`` (a server model's default) scores by likelihood where the backend can and
        generates elsewhere; ``loglikelihood`` where the backend cannot is the backend's error.
        """
        asked = self.values["mode"]
        scored = self.task.kind in (CLASSIFICATION, MULTIPLE_CHOICE)
        mode = asked
        if scored and asked in ("loglikelihood", "auto"):
            capable, why = self.backend.likelihood_support(chat=self.settings.chat, required=asked == "loglikelihood",
                                                           memo=_CacheMemo(self))
            mode = "loglikelihood" if capable else "generate"
            self.mode_note = f"auto: {why}" if asked == "auto" else ""
        elif asked == "auto":
            mode = "generate"
        if mode != asked and scored:
            self._echo(f"{self.name}: mode {mode} ({self.mode_note})")
        self._use({**self.values, "mode": mode})

    # -- predicting -----------------------------------------------------------------------

    def predict(self, examples: Sequence[Example]) -> list[Prediction]:
        """One prediction per example, in order (every process of a data-parallel run returns them all)."""
        if self.asker is None or self.context is None:
            raise RuntimeError(f"{self.name}: call fit(train, dev, context) before predict — it draws the few-shot "
                               f"demos, loads the model and opens the result cache (clue-core run calls it; a "
                               f"learner from context.load_model must be fitted by whoever loaded it)")
        context, cache = self.context, self.asker.cache
        rank, world = context.rank, context.world_size
        mine = shard(len(examples), rank, world)
        hits, misses = cache.hits, cache.misses
        local = self._answer([examples[i] for i in mine])
        stats = {"rank": rank, "examples": len(mine), "cached": cache.hits - hits, "computed": cache.misses - misses}
        parts = gather((mine, [(p.id, p.value, p.scores, p.raw) for p in local], stats), world)
        merged: list[Prediction | None] = [None] * len(examples)
        for indices, rows, _ in parts:
            for index, (id_, value, scores, raw) in zip(indices, rows):
                merged[index] = Prediction(id_, value, scores, raw)
        self.processes.append({"examples": len(examples), **{f"rank {s['rank']}": s["examples"] for _, _, s in parts},
                               "cached": sum(s["cached"] for _, _, s in parts),
                               "computed": sum(s["computed"] for _, _, s in parts)})
        predictions = [p for p in merged if p is not None]
        if len(predictions) != len(examples):
            raise RuntimeError(f"gathered {len(predictions)} of {len(examples)} predictions")
        self._count(examples, predictions)
        return predictions

    def _count(self, examples: Sequence[Example], predictions: Sequence[Prediction]) -> None:
        for example, prediction in zip(examples, predictions):
            raw = prediction.raw if isinstance(prediction.raw, dict) else {}
            labelled = answers.gold(example) is not None
            self.counts["examples"] += 1
            self.counts["labelled"] += labelled
            if raw.get("extracted") is False:
                self.counts["unextracted" if labelled else "unextracted_unlabelled"] += 1
            self.counts["truncated"] += bool(raw.get("truncated"))
            self.counts["malformed"] += "malformed" in raw
            self.counts["circular"] = self.counts.get("circular", 0) + ("circular" in raw)
            for usage in (raw.get("circular") or {}).get("usage") or []:  # what the reordered questions cost
                self.usage.add(usage)
            self.prompts_digest.update(raw.get("prompt") or json.dumps(raw.get("prompts"), ensure_ascii=False))
            for usage in raw.get("usage") or []:
                self.usage.add(usage)

    def _answer(self, examples: Sequence[Example]) -> list[Prediction]:
        """The default prompt's predictions; with ``prompt_variants``, each variant's answers in their raw."""
        return self.spread.ask(examples, self._asked(examples), self._asked_as, getattr(self.context, "split", ""))

    def _asked_as(self, name: str, renderer: Renderer, examples: Sequence[Example]) -> list[Prediction]:
        with variants.worded(self, name, renderer):
            return self._asked(examples)

    def _asked(self, examples: Sequence[Example]) -> list[Prediction]:
        if not examples:
            return []
        asker, renderer, settings = self.asker, self.renderer, self.settings
        assert asker is not None and renderer is not None
        kind = self.task.kind
        stops = settings.stop_strings
        if kind == OPEN_QUESTION:
            return answers.open_questions(examples, renderer, self._generations, stops)
        questions = [renderer.render(example) for example in examples]
        if self.protocol is not None and self.protocol.generates:  # the preset's post-processing
            generations = self._generations(answers.asked(examples, questions))
            return self.protocol.answered(examples, questions, generations)
        if kind == SPAN:
            return answers.spans(examples, questions, self._generations(answers.asked(examples, questions)), stops,
                                 self.convert)
        if kind in (CLASSIFICATION, MULTIPLE_CHOICE):
            if kind == MULTIPLE_CHOICE and self._circular_on():  # each labelled question in its other orders too
                return circular.ask(examples, renderer, settings.circular, self.context.seed,  # type: ignore[union-attr]
                                    self._choose, questions)
            return self._choose(examples, questions)
        if renderer.functions is not None:  # a kind whose answers the task reads (clue_models_llm.generic)
            prompts = answers.asked(examples, questions)
            return answers.parsed(examples, prompts, self._generations(prompts), stops, renderer.functions)
        raise ClueError(f"language models cannot answer {kind} examples")

    def _choose(self, examples: Sequence[Example], questions: Sequence[Question]) -> list[Prediction]:
        """A classification's or multiple choice's answers: the best-scored choice, or the one a generation names."""
        if self.settings.mode == "loglikelihood":
            return self._likelihood(examples, questions)
        return answers.chosen(self.task.kind, examples, questions,
                              self._generations(answers.asked(examples, questions)), self.settings.stop_strings)

    def _circular_on(self) -> bool:
        return circular.enabled(self.settings.circular) and self.circular_note is None

    def _likelihood(self, examples: Sequence[Example], questions: Sequence[Question]) -> list[Prediction]:
        assert self.asker is not None
        method = self.settings.score
        entries = self.asker.likelihoods([ScoreRequest(q.prompt, q.choices) for q in questions],
                                         ppl=method in PROMPT_SCORES)
        return answers.scored(examples, questions, entries, method)

    def _generations(self, prompts: list[str]) -> list[dict[str, Any]]:
        assert self.asker is not None and self.context is not None
        settings = self.settings
        options = GenerateOptions(max_new_tokens=settings.max_new_tokens, thinking_tokens=settings.thinking_tokens,
                                  stops=settings.stop_strings, temperature=settings.temperature,
                                  seed=self.context.seed)
        if not self.description.computed:  # read, not computed: each prompt answered for its question, uncached
            entries: dict[int, dict[str, Any]] = {}
            self.backend.generate(prompts, options, done=entries.update)
            return [entries[index] for index in range(len(prompts))]
        return self.asker.generations(prompts, options)

    def _echo(self, text: str) -> None:
        if self.context is not None and self.context.is_main:
            self.context.echo(f"[{self.task.name}] {text}")

    def _key(self, request: Mapping[str, Any]) -> str:
        """The cache key of ``request``: the model's identity, the settings that change its answer, the request.

        Kept byte for byte across versions of this plugin (tests pin one), so results cached
        earlier stay hits.
        """
        settings = self.likelihood_key_settings if request["kind"] == "loglikelihood" else self.key_settings
        return entry_key({"model": self.identity, "settings": settings}, request)

    # -- reporting ------------------------------------------------------------------------

    def run_info(self) -> dict[str, Any]:
        """``model_info``: who answered, how it was asked and decoded, what was counted; then the backend's own."""
        described = self.backend.describe()
        renderer = self.renderer
        info: dict[str, Any] = {
            "model": self.identity,
            "device": described.device,
            "dtype": described.dtype,
            "decoding": self._decoding(),
            "prompt": {
                "template_sha256": sha256(renderer.skeleton()) if renderer else None,
                "prompts_sha256": self.prompts_digest.hexdigest(),
                **self.prompting.info,
                **({"variants": spread} if (spread := self.spread.info(renderer)) else {}),
            },
            "protocol": self.protocol.info() if self.protocol else {"name": "clue-core"},
            "shots": {"k": self.settings.shots, "seed": self.context.seed if self.context else None,
                      "ids": [example.id for example in self.demos]},
            "unextracted": self.counts["unextracted"],
            "unextracted_unlabelled": self.counts["unextracted_unlabelled"],
            "examples": self.counts["examples"],
            "truncated_prompts": self.counts["truncated"],
            "predict_calls": self.processes,
            "cache": self.cache.stats() if self.cache else None,
        }
        if self.settings.mode == "generate" and self.task.kind in (CLASSIFICATION, MULTIPLE_CHOICE):
            info["unextracted_rule"] = ("counted as wrong: None (classification) or a non-gold index (multiple "
                                        "choice); unlabelled examples get the first label/choice")
        if generic.is_generic(self.task.kind):  # answers the task's parse found malformed (scored as its value)
            info["malformed"] = self.counts["malformed"]
        if self.convert is not None:
            info["traditional"] = {"converter": "opencc", "config": TRADITIONAL_CONFIG}
        if described.computed:
            info.update(described.info)
        if circular.enabled(self.settings.circular):  # how questions were reordered, or why they were not
            seed = self.context.seed if self.context else None
            info["circular"] = circular.info(self.settings.circular, self.circular_note, seed,
                                             self.counts.get("circular", 0))
        if self.mode_note:
            info["mode_note"] = self.mode_note
        if "price_prompt" in self.values:  # a model that declares prices is billed by the token: say how much
            info["usage"] = self.usage.as_dict(self.values["price_prompt"], self.values["price_completion"],
                                               self.values["currency"])
        if not described.computed:  # read from a record: no result cache was used; the record's counts last
            info.pop("cache", None)
            info.update(described.info)
        return info

    def _decoding(self) -> dict[str, Any]:
        """The decoding the model declares settings for (a server has no local thinking budget)."""
        declared = {s.name for s in self.declared}
        return {name: value for name, value in self.settings.decoding().items()
                if name in declared or name in _DECODING_EXTRA or name not in _COMMON_NAMES}

    def save(self, directory: Path) -> None:
        """What was evaluated (nothing is trained): the model's identity and settings."""
        write_json(Path(directory) / "llm.json", {"model": self.name, "identity": self.identity,
                                                   "settings": self.values})


class _CacheMemo:
    """The backend's :class:`~clue_models_llm.backend.Memo`: its own answers, kept in the task's result cache."""

    def __init__(self, learner: LLMLearner) -> None:
        self.learner = learner

    def _cache(self) -> ResultCache:
        assert self.learner.cache is not None
        return self.learner.cache

    def recall(self, request: Mapping[str, Any], valid: Callable[[Any], bool]) -> Any | None:
        key = self.learner._key(request)
        return self._cache().get_many([key], lambda _, entry: valid(entry)).get(key)

    def remember(self, request: Mapping[str, Any], entry: Any) -> None:
        self._cache().put_many({self.learner._key(request): entry})


class _Digest:
    """SHA-256 over every prompt asked, in order."""

    def __init__(self) -> None:
        self._hash = hashlib.sha256()
        self.count = 0

    def update(self, text: str) -> None:
        self._hash.update(text.encode("utf-8"))
        self._hash.update(b"\0")
        self.count += 1

    def hexdigest(self) -> str | None:
        return self._hash.hexdigest() if self.count else None
