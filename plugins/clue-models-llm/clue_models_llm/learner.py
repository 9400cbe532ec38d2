"""The LLM learner: ask every example of a task through the task's prompt, by example kind.

``fit`` trains nothing: it draws the few-shot demos (``shots``, with the run's seed),
loads the model (or builds ``llm-tiny`` from the task's texts), joins the launcher's
process group and opens the result cache. ``predict`` answers this process's shard of the
examples (cached answers first), gathers every shard in the original order and returns one
:class:`Prediction` per example, with what was asked and what came back in ``raw``.

Classification and multiple choice are scored by likelihood (the best choice) or answered
by generation (the answer extracted from the text); span questions and open questions are
always generated. An answer that cannot be extracted counts as wrong: ``None`` for a
classification, an empty answer for a span, and, since a multiple-choice decode step may
insist on a valid index, an index other than the gold one; unlabelled (test) examples get
the first label or choice, so the submission file stays valid. ``raw["extracted"]`` marks
them and ``run_info()`` counts them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from clue_core.plugin import (
    CLASSIFICATION,
    MULTIPLE_CHOICE,
    OPEN_QUESTION,
    SPAN,
    ClueError,
    Example,
    Prediction,
    RunContext,
    Setting,
    TaskSpec,
    write_json,
)
from clue_models_llm.cache import ResultCache, entry_key
from clue_models_llm.distributed import ensure_group, gather, shard
from clue_models_llm.entries import generation_ok, likelihood_ok
from clue_models_llm.extract import (
    THINK_OPEN,
    TRADITIONAL_CONFIG,
    cut_at_stop,
    extract_choice,
    extract_label,
    extract_span,
    extract_tool_calls,
    split_thinking,
    traditional_converter,
)
from clue_models_llm.prompts import Question, Renderer, check_shots, draw_demos, example_fields, require_prompt, sha256
from clue_models_llm.settings import Settings

#: Settings that only generation reads.
GENERATION_ONLY = frozenset({"max_new_tokens", "thinking_tokens", "stop", "temperature"})
#: Process-wide: the last model loaded, reused by the next task of the same run.
_LOADED: dict[tuple[Any, ...], tuple[Any, Any, dict[str, Any]]] = {}


class LLMLearner:
    """One task's learner for a causal LM (``source``: hub id or folder; None builds llm-tiny)."""

    def __init__(self, task: TaskSpec, source: str | None, values: Mapping[str, Any],
                 declared: Sequence[Setting], name: str) -> None:
        self.task = task
        self.source = source
        self.name = name
        self.declared = tuple(declared)
        self._use(values)
        self.prompt = require_prompt(task)
        if source is not None:
            from clue_models_llm.loading import check_source

            check_source(source)
        self.convert = None
        if self.settings.traditional and task.kind == SPAN:
            self.convert = traditional_converter()
        self.model: Any = None
        self.tokenizer: Any = None
        self.context: RunContext | None = None
        self.demos: list[Example] = []
        self.identity: dict[str, Any] = {}
        self.cache: ResultCache | None = None
        self.renderer: Renderer | None = None
        self.device_text = ""
        self.dtype_text = ""
        self.bos: int | None = None
        self.eos_ids: list[int] = []
        self.pad_id = 0
        self.max_positions: int | None = None
        self.chat_info: dict[str, Any] = {}
        self.prompts_digest = _Digest()
        self.counts = {"examples": 0, "labelled": 0, "unextracted": 0, "unextracted_unlabelled": 0,
                       "truncated": 0}
        self.processes: list[dict[str, int]] = []

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

    def fit(self, train: Sequence[Example], dev: Sequence[Example], context: RunContext) -> None:
        self.context = context
        settings = self.settings
        if settings.device_map and context.world_size > 1:
            raise ClueError("setting 'device_map' spreads one model over the GPUs of one process; run it without "
                            "torchrun/accelerate launch (or leave device_map empty for data parallelism)")
        self.demos = draw_demos(train, settings.shots, context.seed, self.task.name)
        self._load(train, dev, context)
        ensure_group(context.world_size)
        folder = context.cache_dir if settings.result_cache else None
        self.cache = ResultCache(folder, json.dumps(self.identity, sort_keys=True))
        self._prepare_prompts()

    def _load(self, train: Sequence[Example], dev: Sequence[Example], context: RunContext) -> None:
        from clue_models_llm import loading

        loading.quiet_transformers()
        settings = self.settings
        device = loading.pick_device(settings.device_map, context.rank)
        dtype = loading.pick_dtype(settings.dtype, device)
        if self.source is None:
            from clue_models_llm.tiny import build_model

            model, tokenizer = build_model(_texts(self.task, [*train, *dev]), self.values, context.seed)
            model.to(device=device, dtype=dtype)
            identity = {"source": "llm-tiny", "sha256": loading.weights_digest(model, tokenizer)}
        else:
            key = (self.source, loading.fingerprint(self.source), settings.revision, settings.trust_remote_code,
                   str(dtype), str(device), settings.device_map)
            if key in _LOADED:
                model, tokenizer, identity = _LOADED[key]
            else:
                _LOADED.clear()
                tokenizer = loading.load_tokenizer(self.source, settings.revision, settings.trust_remote_code)
                model = loading.load_model(self.source, revision=settings.revision,
                                           trust_remote_code=settings.trust_remote_code, dtype=dtype, device=device,
                                           device_map=settings.device_map)
                identity = loading.identity(self.source, model, settings.revision)
                _LOADED[key] = (model, tokenizer, identity)
        self.model, self.tokenizer = model, tokenizer
        self.identity = {**identity, "dtype": str(dtype).replace("torch.", "")}
        self.dtype_text = self.identity["dtype"]
        self.device_text = settings.device_map or str(device)
        bos = tokenizer.bos_token_id
        probe = tokenizer("一", add_special_tokens=True).input_ids
        self.bos = bos if bos is not None and probe[:1] == [bos] else None
        eos: list[int] = []
        for candidate in (tokenizer.eos_token_id, getattr(model.generation_config, "eos_token_id", None)):
            for token in candidate if isinstance(candidate, (list, tuple)) else [candidate]:
                if isinstance(token, int) and token not in eos:
                    eos.append(token)
        self.eos_ids = eos
        pad = tokenizer.pad_token_id
        self.pad_id = pad if pad is not None else (eos[0] if eos else 0)
        limit = getattr(model.config, "max_position_embeddings", None)
        self.max_positions = int(limit) if isinstance(limit, int) and limit > 0 else None

    def _prepare_prompts(self) -> None:
        settings = self.settings
        chat = None
        template = getattr(self.tokenizer, "chat_template", None)
        template_text = json.dumps(template, sort_keys=True) if isinstance(template, dict) else template
        thinking = settings.thinking and settings.mode == "generate"
        switch = bool(template_text and "enable_thinking" in template_text)
        if settings.chat:
            if not template_text:
                raise ClueError(f"model {self.name} has no chat template; leave chat off (--set chat=false)")
            extra = {"enable_thinking": thinking} if switch else {}

            def chat(messages: Sequence[Mapping[str, str]], tools: Sequence[Any] | None = None) -> str:
                more = {**extra, "tools": list(tools)} if tools else extra
                return self.tokenizer.apply_chat_template(list(messages), tokenize=False,
                                                          add_generation_prompt=True, **more)

        self.renderer = Renderer(self.task, demos=self.demos, chat=chat,
                                 prefix_in_chat=not (settings.mode == "generate" and thinking))
        self.chat_info = {
            "chat": settings.chat,
            "chat_template_sha256": sha256(template_text) if template_text else None,
            "thinking": settings.thinking,
            "thinking_switch": switch,
        }

    # -- predicting -----------------------------------------------------------------------

    def _fitted(self) -> bool:
        return self.model is not None

    def predict(self, examples: Sequence[Example]) -> list[Prediction]:
        if not self._fitted():
            self.fit([], [], RunContext(task=self.task))
        context = self.context
        assert context is not None
        rank, world = context.rank, context.world_size
        mine = shard(len(examples), rank, world)
        hits, misses = (self.cache.hits, self.cache.misses) if self.cache else (0, 0)
        local = self._answer([examples[i] for i in mine])
        stats = {"rank": rank, "examples": len(mine),
                 "cached": (self.cache.hits - hits) if self.cache else 0,
                 "computed": (self.cache.misses - misses) if self.cache else len(mine)}
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
            labelled = _gold(example) is not None
            self.counts["examples"] += 1
            self.counts["labelled"] += labelled
            if raw.get("extracted") is False:
                self.counts["unextracted" if labelled else "unextracted_unlabelled"] += 1
            self.counts["truncated"] += bool(raw.get("truncated"))
            self.prompts_digest.update(raw.get("prompt") or json.dumps(raw.get("prompts"), ensure_ascii=False))

    def _answer(self, examples: Sequence[Example]) -> list[Prediction]:
        if not examples:
            return []
        kind = self.task.kind
        if kind == OPEN_QUESTION:
            return self._open_questions(examples)
        renderer = self.renderer
        assert renderer is not None
        questions = [renderer.render(example) for example in examples]
        if kind == SPAN:
            return self._spans(examples, questions)
        if kind in (CLASSIFICATION, MULTIPLE_CHOICE):
            if self.settings.mode == "loglikelihood":
                return self._likelihood(examples, questions)
            return self._choices_generated(examples, questions)
        raise ClueError(f"language models cannot answer {kind} examples")

    def _echo(self, text: str) -> None:
        if self.context is not None and self.context.is_main:
            self.context.echo(f"[{self.task.name}] {text}")

    def _key(self, request: Mapping[str, Any]) -> str:
        settings = self.likelihood_key_settings if request["kind"] == "loglikelihood" else self.key_settings
        return entry_key({"model": self.identity, "settings": settings}, request)

    def _encode(self, texts: Sequence[str]) -> list[list[int]]:
        return [list(ids) for ids in self.tokenizer(list(texts), add_special_tokens=False)["input_ids"]]

    # likelihood

    def _likelihood(self, examples: Sequence[Example], questions: Sequence[Question]) -> list[Prediction]:
        from clue_models_llm.scoring import ChoiceScores

        method = self.settings.score
        ppl = method == "ppl"
        keys = [self._key({"kind": "loglikelihood", "prompt": q.prompt, "choices": list(q.choices), "ppl": ppl})
                for q in questions]
        sizes = dict(zip(keys, (len(q.choices) for q in questions)))
        results = self.cache.get_many(keys, lambda key, entry: likelihood_ok(entry, sizes[key], ppl)
                                      ) if self.cache else {}
        missing = _first_missing(keys, results)
        self._echo(f"{self.name}: scoring {_count(len(questions), 'example')} by likelihood "
                   f"({len(questions) - len(missing)} cached)")
        if missing:
            self._score_missing([questions[i] for i in missing], [keys[i] for i in missing], results, ppl)
        predictions = []
        for example, question, key in zip(examples, questions, keys):
            entry = results[key]
            scores = ChoiceScores.of(entry).scores(method)
            best = max(range(len(scores)), key=lambda j: (scores[j], -j))
            raw = {"prompt": question.prompt, "continuations": list(question.choices),
                   "logprobs": entry["logprobs"], "tokens": entry["tokens"], "score": method,
                   "scores": list(scores), "answer": question.choices[best]}
            if ppl:
                raw.update(prefix_logprob=entry["prefix_logprob"], prefix_tokens=entry["prefix_tokens"])
            if entry.get("truncated"):
                raw["truncated"] = entry["truncated"]
            if entry.get("usage"):
                raw["usage"] = [entry["usage"]]
            predictions.append(Prediction(example.id, question.values[best], tuple(scores), raw))
        return predictions

    def _store(self, results: dict[str, Any], entries: Mapping[str, Any]) -> None:
        """Keep answers that arrived, and commit them to the cache at once (a kill loses none)."""
        results.update(entries)
        if self.cache:
            self.cache.put_many(entries)

    def _score_missing(self, questions: Sequence[Question], keys: Sequence[str], results: dict[str, Any],
                       ppl: bool) -> None:
        """Score the choices of ``questions`` with the local model, storing each batch as it is done."""
        from clue_models_llm.scoring import LikelihoodScorer, encode_requests

        requests = encode_requests(self.tokenizer, [(q.prompt, q.choices) for q in questions],
                                   bos=self.bos, fallback=self.eos_ids[0] if self.eos_ids else self.pad_id,
                                   max_positions=self.max_positions)
        scorer = LikelihoodScorer(self.model, self.settings.eval_batch_size, self.pad_id, prefix_stats=ppl)

        def store(batch: list[int], scored: list[Any]) -> None:
            self._store(results, {keys[j]: {**s.as_dict(), "truncated": requests[j].truncated}
                                  for j, s in zip(batch, scored)})

        scorer.score(requests, done=store)

    # generation

    def _generations(self, prompts: Sequence[str]) -> list[dict[str, Any]]:
        """What the model writes after each prompt (cached), as :class:`Generated` dicts."""
        settings = self.settings
        seed = self.context.seed if self.context and settings.temperature > 0 else None
        keys = [self._key({"kind": "generate", "prompt": prompt, "seed": seed}) for prompt in prompts]
        results = self.cache.get_many(keys, lambda key, entry: generation_ok(entry)) if self.cache else {}
        missing = _first_missing(keys, results)
        self._echo(f"{self.name}: generating {_count(len(prompts), 'answer')} ({len(prompts) - len(missing)} cached)")
        if missing:
            self._generate_missing([prompts[i] for i in missing], [keys[i] for i in missing], results)
        return [results[key] for key in keys]

    def _generate_missing(self, prompts: Sequence[str], keys: Sequence[str], results: dict[str, Any]) -> None:
        """Generate with the local model, storing each batch as it is done."""
        from clue_models_llm.generation import Generator

        settings = self.settings
        budget = settings.max_new_tokens + settings.thinking_tokens + 8
        encoded, truncated = [], []
        for ids in self._encode(prompts):
            if self.bos is not None and ids[:1] != [self.bos]:
                ids = [self.bos, *ids]
            cut = 0
            if self.max_positions and len(ids) + budget > self.max_positions:
                cut = min(len(ids) - 1, len(ids) + budget - self.max_positions)
                ids = ids[:1] + ids[1 + cut:] if self.bos is not None else ids[cut:]
            encoded.append(ids)
            truncated.append(cut)
        generator = Generator(self.model, self.tokenizer, batch_size=settings.eval_batch_size,
                              max_new_tokens=settings.max_new_tokens, thinking_tokens=settings.thinking_tokens,
                              stops=settings.stop_strings, temperature=settings.temperature,
                              eos_ids=self.eos_ids, pad_id=self.pad_id, seed=self.context.seed if self.context
                              else 0)
        thinking = [prompt.rstrip().endswith(THINK_OPEN) for prompt in prompts]

        def store(batch: list[int], generated: list[Any]) -> None:
            self._store(results, {keys[j]: {**g.as_dict(), "truncated": truncated[j]}
                                  for j, g in zip(batch, generated)})

        generator.generate(encoded, thinking, done=store)

    def _answer_text(self, generation: Mapping[str, Any]) -> tuple[str | None, str]:
        thinking, answer = split_thinking(generation["text"])
        return thinking, cut_at_stop(answer, self.settings.stop_strings)

    def _generated_raw(self, prompt: str, generation: Mapping[str, Any]) -> dict[str, Any]:
        raw = {"prompt": prompt, "generation": generation["text"], "finish": generation["finish"],
               "generated_tokens": generation["tokens"]}
        if generation.get("thinking_tokens"):
            raw["thinking_tokens"] = generation["thinking_tokens"]
        if generation.get("truncated"):
            raw["truncated"] = generation["truncated"]
        if generation.get("reasoning"):
            raw["reasoning"] = generation["reasoning"]
        if generation.get("usage"):
            raw["usage"] = [generation["usage"]]
        return raw

    def _choices_generated(self, examples: Sequence[Example], questions: Sequence[Question]) -> list[Prediction]:
        generations = self._generations([q.prompt for q in questions])
        predictions = []
        for example, question, generation in zip(examples, questions, generations):
            _, answer = self._answer_text(generation)
            if self.task.kind == CLASSIFICATION:
                index = extract_label(answer, question.choices)
            else:
                index = extract_choice(answer, question.choices, question.letters)
            raw = self._generated_raw(question.prompt, generation)
            raw["extracted"] = index is not None
            if index is not None:
                raw["answer"] = question.choices[index]
                value: Any = question.values[index]
            else:
                raw["answer"] = None
                value = self._unextracted(example, question)
                raw["placeholder"] = value
            predictions.append(Prediction(example.id, value, None, raw))
        return predictions

    def _unextracted(self, example: Example, question: Question) -> Any:
        """No answer (None, scored as wrong) where the example has gold; where it has none (a test
        file), the first choice, so the submission file stays valid — flagged in ``raw``."""
        if _gold(example) is not None:
            return None
        return question.values[0] if self.task.kind == CLASSIFICATION else 0

    def _spans(self, examples: Sequence[Example], questions: Sequence[Question]) -> list[Prediction]:
        generations = self._generations([q.prompt for q in questions])
        predictions = []
        for example, question, generation in zip(examples, questions, generations):
            _, answer = self._answer_text(generation)
            text = extract_span(answer)
            raw = self._generated_raw(question.prompt, generation)
            raw["extracted"] = text is not None
            raw["answer"] = text
            value = text or ""
            if text is not None and self.convert is not None:
                value = self.convert(text)
                raw["traditional"] = value
            predictions.append(Prediction(example.id, value, None, raw))
        return predictions

    def _open_questions(self, examples: Sequence[Example]) -> list[Prediction]:
        renderer = self.renderer
        assert renderer is not None
        answers: list[list[str]] = [[] for _ in examples]
        raws: list[dict[str, list[Any]]] = [{"prompts": [], "generations": [], "answers": answers[i]}
                                            for i in range(len(examples))]
        for turn in range(max(len(e.turns) for e in examples)):  # type: ignore[union-attr]
            active = [i for i, e in enumerate(examples) if len(e.turns) > turn]  # type: ignore[union-attr]
            asked = [renderer.turn_prompt(examples[i], answers[i]) for i in active]
            for i, prompt, generation in zip(active, asked, self._generations(asked)):
                _, answer = self._answer_text(generation)
                answers[i].append(answer.strip())
                raw = raws[i]
                raw["prompts"].append(prompt)
                raw["generations"].append(generation["text"])
                if getattr(examples[i], "tools", ()):
                    calls = generation.get("tool_calls") or extract_tool_calls(answer)
                    raw.setdefault("tool_calls", []).append(calls)
                for name in ("reasoning", "usage"):
                    if generation.get(name):
                        raw.setdefault(name, []).append(generation[name])
        return [Prediction(example.id, said[-1] if said else "", None, {**raw, "extracted": bool(said)})
                for example, said, raw in zip(examples, answers, raws)]

    # -- reporting ------------------------------------------------------------------------

    def run_info(self) -> dict[str, Any]:
        renderer = self.renderer
        info: dict[str, Any] = {
            "model": self.identity,
            "device": self.device_text,
            "dtype": self.dtype_text,
            "decoding": self.settings.decoding(),
            "prompt": {
                "template_sha256": sha256(renderer.skeleton()) if renderer else None,
                "prompts_sha256": self.prompts_digest.hexdigest(),
                **self.chat_info,
                "bos": self.bos is not None,
            },
            "shots": {"k": self.settings.shots, "seed": self.context.seed if self.context else None,
                      "ids": [example.id for example in self.demos]},
            "eos_token_ids": self.eos_ids,
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
        if self.convert is not None:
            info["traditional"] = {"converter": "opencc", "config": TRADITIONAL_CONFIG}
        return info

    def save(self, directory: Path) -> None:
        """What was evaluated (nothing is trained): the model's identity and settings."""
        write_json(Path(directory) / "llm.json", {"model": self.name, "identity": self.identity,
                                                   "settings": self.values})


class _Digest:
    """SHA-256 over every prompt asked, in order."""

    def __init__(self) -> None:
        import hashlib

        self._hash = hashlib.sha256()
        self.count = 0

    def update(self, text: str) -> None:
        self._hash.update(text.encode("utf-8"))
        self._hash.update(b"\0")
        self.count += 1

    def hexdigest(self) -> str | None:
        return self._hash.hexdigest() if self.count else None


def _first_missing(keys: Sequence[str], results: Mapping[str, Any]) -> list[int]:
    """Indices of the requests to compute: not cached, and each distinct request once."""
    seen: set[str] = set()
    missing = []
    for index, key in enumerate(keys):
        if key not in results and key not in seen:
            seen.add(key)
            missing.append(index)
    return missing


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _gold(example: Example) -> Any:
    for name in ("label", "answers", "reference"):
        if hasattr(example, name):
            return getattr(example, name)
    return None


def _texts(task: TaskSpec, examples: Iterable[Example]) -> list[str]:
    """What ``llm-tiny``'s characters come from: the prompt's words and the examples' fields."""
    prompt = task.prompt
    texts = ["ABCDEFGHIJKLMNOPQRSTUVWXYZ. \n0123456789"]
    if prompt is not None:
        texts += [prompt.instruction, prompt.template, prompt.answer_prefix, *prompt.verbalizers.values()]
    texts += list(task.labels)
    for example in examples:
        texts += [str(value) for value in example_fields(example, task.kind).values()]
        if task.kind == SPAN and getattr(example, "answers", None):
            texts += [text for text, _ in example.answers]  # type: ignore[union-attr]
        if task.kind == OPEN_QUESTION:
            texts += list(example.turns)  # type: ignore[union-attr]
    return texts
