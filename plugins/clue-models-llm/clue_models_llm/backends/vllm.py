"""The vLLM backend: ``vllm:<hub id or folder>``, a causal LM served by vLLM's offline engine in this process.

The learner asks it what it asks ``llm:`` (same prompts, cache, predictions and metrics);
only the engine differs. Likelihood goes through ``prompt_logprobs`` with prefix caching
(:mod:`clue_models_llm.vllm_scoring`), generation through vLLM's sampling with the
transformers backend's rules for thinking and stop strings
(:mod:`clue_models_llm.vllm_generation`). ``vllm`` is imported in :meth:`VLLMBackend.load`
only: it needs a GPU and its own torch, so it is an extra (``clue-models-llm[vllm]``)
that this project's CI does not install.

Parallelism: ``tensor_parallel_size`` GPUs per engine; data parallelism is the family's
launcher (``torchrun --nproc_per_node N``): each process runs one engine on its own
``tensor_parallel_size`` GPUs and answers its shard of the examples (vLLM 0.33 refuses
``LLM(data_parallel_size>1)`` in one process).

Shapes followed: vLLM 0.33.0's ``LLM(model, tensor_parallel_size=, dtype=, seed=,
gpu_memory_utilization=, max_model_len=, enable_prefix_caching=, trust_remote_code=,
revision=, enforce_eager=)``, ``LLM.generate(prompts, sampling_params, use_tqdm=)`` taking
``{"prompt_token_ids": [...]}`` prompts, ``LLM.get_tokenizer()``.
"""

from __future__ import annotations

import os
import types
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from clue_core.plugin import ClueError, Setting
from clue_models_llm.backend import Backend, BackendInfo, Done
from clue_models_llm.settings import COMMON, Settings

if TYPE_CHECKING:  # RunContext for type checkers only: listing models never imports clue_core.context
    from clue_core.plugin import RunContext
    from clue_models_llm.exchange import Description, GenerateOptions, ScoreRequest
    from clue_models_llm.vllm_scoring import Scores, TokenRequest

MISSING = "vllm: models need vLLM (a GPU and its own torch): pip install 'clue-models-llm[vllm]'"
#: Requests sent to the engine in one ``generate`` call (each call's answers are committed at once).
CHUNK = 512


def import_vllm() -> Any:
    """The ``vllm`` module, or the one line that says how to get it."""
    try:
        import vllm
    except ImportError:
        raise ClueError(MISSING) from None
    return vllm


def pin_gpus(rank: int, world_size: int, tensor_parallel: int) -> None:
    """Under a launcher, give each process its own ``tensor_parallel`` GPUs (before vLLM starts)."""
    if world_size <= 1:
        return
    local = int(os.environ.get("LOCAL_RANK", rank))
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible:
        devices = [d for d in visible.split(",") if d.strip()]
    else:
        import torch

        devices = [str(i) for i in range(torch.cuda.device_count())]
    mine = devices[local * tensor_parallel:(local + 1) * tensor_parallel]
    if len(mine) < tensor_parallel:
        raise ClueError(f"process {local} of {world_size} needs {tensor_parallel} GPU(s) (tensor_parallel_size) but "
                        f"only {len(devices)} are visible to all {world_size} processes")
    os.environ["CUDA_VISIBLE_DEVICES"] = ",".join(mine)


class VLLMBackend(Backend):
    """A causal LM in vLLM's offline engine (``source``: hub id or folder)."""

    def __init__(self, source: str | None, values: Mapping[str, Any], name: str) -> None:
        if not source:
            raise ClueError("model 'vllm' needs a checkpoint: vllm:<hub id or local folder>")
        from clue_models_llm.loading import check_source

        check_source(source)
        self.source = source
        self.values = dict(values)
        self.settings = Settings.of(self.values)
        if self.settings.dtype == "bf16-mixed":  # llm:'s CPU mode (clue_models_llm.cpu_bf16.to_mixed), not vLLM's
            raise ClueError("dtype=bf16-mixed is llm:'s (bf16 weights, float32 activations); vllm: takes auto, "
                            "float32, bfloat16 or float16")
        self.name = name
        self.engine: Any = None
        self.tokenizer: Any = None
        self.fields: frozenset[str] = frozenset()
        self._identity: dict[str, Any] = {}
        self.dtype_text = ""
        self.version = ""
        self.bos: int | None = None
        self.eos_ids: list[int] = []
        self.max_positions: int | None = None
        self.traffic = {"requests": 0, "cached_tokens": 0, "asked_again": 0}

    # -- setting up -----------------------------------------------------------------------

    def load(self, context: RunContext, texts: Callable[[], Sequence[str]]) -> None:
        vllm = import_vllm()
        values, settings = self.values, self.settings
        pin_gpus(context.rank, context.world_size, values["tensor_parallel_size"])
        options: dict[str, Any] = {
            "tensor_parallel_size": values["tensor_parallel_size"], "dtype": settings.dtype, "seed": context.seed,
            "gpu_memory_utilization": values["gpu_memory_utilization"],
            "enable_prefix_caching": values["enable_prefix_caching"], "trust_remote_code": settings.trust_remote_code,
            "enforce_eager": values["enforce_eager"]}
        if values["max_model_len"]:
            options["max_model_len"] = values["max_model_len"]
        if settings.revision:
            options["revision"] = settings.revision
        self.engine = vllm.LLM(self.source, **options)
        self.tokenizer = self.engine.get_tokenizer()
        self.fields = sampling_fields(vllm.SamplingParams)
        self.version = str(getattr(vllm, "__version__", "unknown"))
        config = model_config(self.engine)
        dtype = getattr(config, "dtype", None) if config is not None else None
        self.dtype_text = str(dtype).replace("torch.", "") if dtype is not None else settings.dtype
        limit = getattr(config, "max_model_len", None) if config is not None else None
        limit = limit or values["max_model_len"] or None
        self.max_positions = int(limit) - 1 if limit else None  # room for the one token a request generates
        from clue_models_llm import loading

        stub = types.SimpleNamespace(config=types.SimpleNamespace())
        self._identity = {"engine": "vllm", "vllm": self.version,
                          **loading.identity(self.source, stub, settings.revision), "dtype": self.dtype_text}
        self._special_tokens()

    def _special_tokens(self) -> None:
        """BOS only where the tokenizer itself adds it, and the end-of-sequence ids (as the transformers backend)."""
        tokenizer = self.tokenizer
        bos = getattr(tokenizer, "bos_token_id", None)
        probe = list(tokenizer("一", add_special_tokens=True)["input_ids"])
        self.bos = bos if bos is not None and probe[:1] == [bos] else None
        eos: list[int] = []
        for candidate in (getattr(tokenizer, "eos_token_id", None), self._generation_eos()):
            for token in candidate if isinstance(candidate, (list, tuple)) else [candidate]:
                if isinstance(token, int) and token not in eos:
                    eos.append(token)
        self.eos_ids = eos

    def _generation_eos(self) -> Any:
        """The checkpoint's ``generation_config.json`` end-of-sequence ids (vLLM stops at them too)."""
        try:
            from transformers import GenerationConfig

            options = {"revision": self.settings.revision} if self.settings.revision else {}
            return GenerationConfig.from_pretrained(self.source, **options).eos_token_id
        except Exception:  # no generation_config.json: the tokenizer's EOS alone
            return None

    def describe(self) -> Description:
        """The engine's model and version, its traffic so far; the tokenizer's chat template, as ``llm:`` renders it."""
        values = self.values
        engine = {"vllm": self.version, "tensor_parallel_size": values["tensor_parallel_size"],
                  "enable_prefix_caching": values["enable_prefix_caching"],
                  "max_model_len": self.max_positions + 1 if self.max_positions else None,
                  "traffic": dict(self.traffic)}
        from clue_models_llm.exchange import Description

        return Description(identity=dict(self._identity),
                           device=f"vllm (tensor_parallel_size={values['tensor_parallel_size']})",
                           dtype=self.dtype_text, info={"eos_token_ids": self.eos_ids, "engine": engine},
                           tokenizer=self.tokenizer, adds_bos=self.bos is not None)

    # -- computing ------------------------------------------------------------------------

    def _generate(self, prompts: Sequence[Sequence[int]], params: Sequence[dict[str, Any]]) -> list[Any]:
        import vllm

        sampling = [vllm.SamplingParams(**kwargs) for kwargs in params]
        outputs = self.engine.generate([{"prompt_token_ids": list(ids)} for ids in prompts], sampling,
                                       use_tqdm=False)
        if len(outputs) != len(prompts):
            raise ClueError(f"vLLM answered {len(outputs)} of {len(prompts)} requests")
        self.traffic["requests"] += len(prompts)
        self.traffic["cached_tokens"] += sum(int(getattr(o, "num_cached_tokens", None) or 0) for o in outputs)
        return list(outputs)

    def score_choices(self, requests: Sequence[ScoreRequest], *, ppl: bool, done: Done) -> None:
        """Chunk by chunk in prefix order, each example reported when its choices are read."""
        from clue_models_llm.scoring import encode_requests
        from clue_models_llm.vllm_scoring import Scores, read_scores, sampling_kwargs, token_requests

        encoded = encode_requests(self.tokenizer, [(r.prompt, r.choices) for r in requests], bos=self.bos,
                                  fallback=self.eos_ids[0] if self.eos_ids else 0, max_positions=self.max_positions)
        asked = token_requests(encoded, ppl=ppl)
        by_example: dict[int, list[int]] = {}
        for index, request in enumerate(asked):
            by_example.setdefault(request.example, []).append(index)
        scores = Scores(asked, {})
        caching = bool(self.values["enable_prefix_caching"])
        position = 0
        while position < len(asked):
            end = min(len(asked), position + CHUNK)
            while end < len(asked) and asked[end].example == asked[end - 1].example:
                end += 1  # an example's choices stay in one chunk
            chunk = list(range(position, end))
            again = self._read(asked, chunk, scores, caching)
            if again:
                self.traffic["asked_again"] += len(again)
                fresh: list[TokenRequest] = [replace(asked[i], fresh=True) for i in again]
                retry = Scores(fresh, {})
                read_scores(self._generate([r.ids for r in fresh], [sampling_kwargs(r, caching=caching,
                                                                                      fields=self.fields)
                                                                     for r in fresh]),
                            fresh, range(len(fresh)), retry)
                for j, i in enumerate(again):
                    scores.values[i] = retry.values[j]
            finished = dict.fromkeys(asked[i].example for i in chunk)
            done({example: {**scores.entry(by_example[example], ppl), "truncated": encoded[example].truncated}
                  for example in finished})
            position = end

    def _read(self, asked: Sequence[TokenRequest], chunk: list[int], scores: Scores, caching: bool) -> list[int]:
        from clue_models_llm.vllm_scoring import read_scores, sampling_kwargs

        outputs = self._generate([asked[i].ids for i in chunk],
                                 [sampling_kwargs(asked[i], caching=caching, fields=self.fields) for i in chunk])
        return read_scores(outputs, asked, chunk, scores)

    def generate(self, prompts: Sequence[str], options: GenerateOptions, *, done: Done) -> None:
        """Rounds of ``LLM.generate`` until every prompt has its answer (see :mod:`clue_models_llm.vllm_generation`)."""
        from clue_models_llm.extract import THINK_OPEN
        from clue_models_llm.vllm_generation import Row, advance, close_spent, entry, round_kwargs

        budget = options.max_new_tokens + options.thinking_tokens + 8
        rows, truncated = [], []
        encoded = self.tokenizer(list(prompts), add_special_tokens=False)["input_ids"]
        for prompt, ids in zip(prompts, encoded):
            ids = list(ids)
            if self.bos is not None and ids[:1] != [self.bos]:
                ids = [self.bos, *ids]
            cut = 0
            if self.max_positions and len(ids) + budget > self.max_positions:
                cut = min(len(ids) - 1, len(ids) + budget - self.max_positions)
                ids = ids[:1] + ids[1 + cut:] if self.bos is not None else ids[cut:]
            rows.append(Row(ids, prompt.rstrip().endswith(THINK_OPEN)))
            truncated.append(cut)
        close_ids = list(self.tokenizer("\n</think>\n\n", add_special_tokens=False)["input_ids"])
        decode = self._decode
        reported: set[int] = set()
        while True:
            close_spent(rows, options, close_ids)
            active = [i for i, row in enumerate(rows) if not row.finish]
            for start in range(0, len(active), CHUNK):
                part = active[start:start + CHUNK]
                outputs = self._generate([rows[i].prompt + rows[i].ids for i in part],
                                         [round_kwargs(rows[i], options) for i in part])
                for i, output in zip(part, outputs):
                    if not output.outputs:
                        raise ClueError("vLLM answered a generation request with no outputs")
                    advance(rows[i], output.outputs[0], options, decode, close_ids)
                ended = [i for i in part if rows[i].finish and i not in reported]
                if ended:
                    done({i: entry(rows[i], decode, self.eos_ids, truncated[i]) for i in ended})
                    reported.update(ended)
            if not active:
                return

    def _decode(self, ids: Sequence[int]) -> str:
        return self.tokenizer.decode(list(ids), skip_special_tokens=False, clean_up_tokenization_spaces=False)


def sampling_fields(cls: Any) -> frozenset[str]:
    """The argument names ``SamplingParams`` takes (a msgspec Struct in vLLM 0.33, a plain class earlier)."""
    names = getattr(cls, "__struct_fields__", None)
    if names is None:
        import inspect

        names = [n for n in inspect.signature(cls).parameters if n != "self"]
    return frozenset(names)


def model_config(engine: Any) -> Any:
    """The engine's model configuration (``LLM.model_config`` in vLLM 0.33, ``llm_engine.model_config`` earlier)."""
    config = getattr(engine, "model_config", None)
    if config is None:
        config = getattr(getattr(engine, "llm_engine", None), "model_config", None)
    return config


#: What vLLM schedules or places itself.
NOT_FOR_VLLM = frozenset({"device_map", "eval_batch_size"})

#: The engine's own settings. None keys the result cache: they change how fast answers come, not which
#: model answers (the dtype, which does, is in the identity and keys it through ``dtype``).
ENGINE: tuple[Setting, ...] = (
    Setting("tensor_parallel_size", int, 1, "vllm: GPUs one engine spreads the model over (tensor parallelism)",
            minimum=1),
    Setting("gpu_memory_utilization", float, 0.9, "vllm: share of each GPU's memory the engine may take (weights "
            "and key/value cache)", minimum=0.05, maximum=1.0),
    Setting("max_model_len", int, 0, "vllm: context length of the engine in tokens (0: the model's own); longer "
            "prompts lose their oldest tokens, counted as truncated", minimum=0),
    Setting("enable_prefix_caching", bool, True, "vllm: reuse the key/value blocks of a prompt shared by several "
            "requests (every choice of an example, the few-shot demos), so a long shared prompt is computed once"),
    Setting("enforce_eager", bool, False, "vllm: no CUDA graphs (slower, but starts faster and takes less "
            "memory)"),
)

#: Settings of ``vllm:<model>``: the family's prompt, scoring and decoding settings (``vllm:`` and ``llm:`` are
#: asked the same questions), less what only an in-process transformers model reads, and the engine's.
VLLM: tuple[Setting, ...] = (*(s for s in COMMON if s.name not in NOT_FOR_VLLM), *ENGINE)

BACKEND = BackendInfo(
    "vllm", "any causal LM vLLM serves, vllm:<hub id or local folder>, in vLLM's offline engine (a GPU; pip "
    "install 'clue-models-llm[vllm]'): the prompts, cache and predictions of llm:, likelihood through "
    "prompt log-probabilities with prefix caching", VLLM, VLLMBackend,
    argument="a checkpoint: vllm:<hub id or local folder>")
