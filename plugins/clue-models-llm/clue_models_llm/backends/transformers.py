"""The in-process backend: a causal LM and its tokenizer loaded with transformers.

``argument`` is a hub id, a folder in the ``save_pretrained`` layout or a ``.gguf`` file
(``llm:<argument>`` and the catalogue; GGUF files: :mod:`clue_models_llm.gguf_loading`);
``None`` builds ``llm-tiny`` from the task's texts at load time. A model loaded for one task
is kept for the next task of the same run (same source and file contents, revision, dtype
and device). Likelihood runs through :class:`~clue_models_llm.scoring.LikelihoodScorer`
(each prompt encoded once for all its choices, the output head applied only at the scored
positions, a bounded chunk at a time), generation through
:class:`~clue_models_llm.generation.Generator` (greedy unless ``temperature`` > 0, a
separate token budget for thinking).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from clue_core.plugin import ClueError
from clue_models_llm.backend import Backend, BackendInfo, Done
from clue_models_llm.catalogue import CATALOGUE
from clue_models_llm.settings import COMMON, TINY, Settings

if TYPE_CHECKING:  # for type checkers only: listing models imports this module, never clue_core.context
    from clue_core.plugin import RunContext
    from clue_models_llm.exchange import Description, GenerateOptions, ScoreRequest

#: Process-wide: the last model loaded, reused by the next task of the same run.
_LOADED: dict[tuple[Any, ...], tuple[Any, Any, dict[str, Any]]] = {}
#: Tokens generation may add past its budgets (a closed think block, a stop string's last pieces).
GENERATION_SLACK = 8


class TransformersBackend(Backend):
    """A local causal LM (``source``: hub id, folder or GGUF file; ``None`` builds llm-tiny at load).

    Every prompt can be scored in process, so ``likelihood_support`` is the protocol's default.
    """

    def __init__(self, source: str | None, values: Mapping[str, Any], name: str) -> None:
        self.source = source
        self.values = dict(values)
        self.settings = Settings.of(self.values)
        self.name = name
        if source is not None:
            from clue_models_llm.loading import check_source

            check_source(source)
        self.model: Any = None
        self.tokenizer: Any = None
        self._identity: dict[str, Any] = {}
        self.device_text = ""
        self.dtype_text = ""
        self.bos: int | None = None
        self.eos_ids: list[int] = []
        self.pad_id = 0
        self.max_positions: int | None = None

    # -- setting up -----------------------------------------------------------------------

    def load(self, context: RunContext, texts: Callable[[], Sequence[str]]) -> None:
        from clue_models_llm import loading

        settings = self.settings
        if settings.device_map and context.world_size > 1:
            raise ClueError("setting 'device_map' spreads one model over the GPUs of one process; run it without "
                            "torchrun/accelerate launch (or leave device_map empty for data parallelism)")
        loading.quiet_transformers()
        device = loading.pick_device(settings.device_map, context.rank)
        precision = loading.pick_precision(settings.dtype, device, self.source, settings.revision)
        dtype = precision.load
        if self.source is None:
            from clue_models_llm.tiny import build_model

            model, tokenizer = build_model(texts(), self.values, context.seed)
            model.to(device=device, dtype=dtype)
            identity = {"source": "llm-tiny", "sha256": loading.weights_digest(model, tokenizer)}
            precision.finish(model)
        else:
            key = (self.source, loading.fingerprint(self.source), settings.revision, settings.trust_remote_code,
                   precision.name, str(device), settings.device_map)
            if key in _LOADED:
                model, tokenizer, identity = _LOADED[key]
            else:
                _LOADED.clear()
                model, tokenizer, identity = self._load(context, dtype, device)
                precision.finish(model)
                _LOADED[key] = (model, tokenizer, identity)
        self.model, self.tokenizer = model, tokenizer
        self._identity = {**identity, "dtype": precision.name}
        self.dtype_text = self._identity["dtype"]
        self.device_text = settings.device_map or str(device)
        self._special_tokens()

    def _load(self, context: RunContext, dtype: Any, device: Any) -> tuple[Any, Any, dict[str, Any]]:
        from clue_models_llm import gguf_loading, loading

        settings, source = self.settings, self.source
        assert source is not None
        if gguf_loading.is_gguf(source):
            if settings.device_map:
                raise ClueError("setting 'device_map' is for hub ids and folders; a GGUF model loads on one device")
            return gguf_loading.load(source, dtype=dtype, device=device, store=context.cache_dir)
        tokenizer = loading.load_tokenizer(source, settings.revision, settings.trust_remote_code)
        model = loading.load_model(source, revision=settings.revision, trust_remote_code=settings.trust_remote_code,
                                   dtype=dtype, device=device, device_map=settings.device_map)
        return model, tokenizer, loading.identity(source, model, settings.revision)

    def _special_tokens(self) -> None:
        """BOS (only where the tokenizer itself adds it), every EOS id, the padding id and the context length."""
        model, tokenizer = self.model, self.tokenizer
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

    def describe(self) -> Description:
        """The loaded model's identity, device and dtype, EOS ids; its tokenizer holds the chat template."""
        from clue_models_llm.exchange import Description

        return Description(identity=dict(self._identity), device=self.device_text, dtype=self.dtype_text,
                           info={"eos_token_ids": self.eos_ids}, tokenizer=self.tokenizer,
                           adds_bos=self.bos is not None)

    # -- computing ------------------------------------------------------------------------

    def score_choices(self, requests: Sequence[ScoreRequest], *, ppl: bool, done: Done) -> None:
        """Scored batch by batch, each batch reported as it is done."""
        from clue_models_llm.scoring import LikelihoodScorer, encode_requests

        encoded = encode_requests(self.tokenizer, [(r.prompt, r.choices) for r in requests], bos=self.bos,
                                  fallback=self.eos_ids[0] if self.eos_ids else self.pad_id,
                                  max_positions=self.max_positions)
        scorer = LikelihoodScorer(self.model, self.settings.eval_batch_size, self.pad_id, prefix_stats=ppl)

        def report(batch: list[int], scored: list[Any]) -> None:
            done({j: {**s.as_dict(), "truncated": encoded[j].truncated} for j, s in zip(batch, scored)})

        scorer.score(encoded, done=report)

    def generate(self, prompts: Sequence[str], options: GenerateOptions, *, done: Done) -> None:
        """Generated batch by batch; a prompt too long for the context loses its oldest tokens (counted)."""
        from clue_models_llm.extract import THINK_OPEN
        from clue_models_llm.generation import Generator

        budget = options.max_new_tokens + options.thinking_tokens + GENERATION_SLACK
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
        generator = Generator(self.model, self.tokenizer, batch_size=self.settings.eval_batch_size,
                              max_new_tokens=options.max_new_tokens, thinking_tokens=options.thinking_tokens,
                              stops=options.stops, temperature=options.temperature, eos_ids=self.eos_ids,
                              pad_id=self.pad_id, seed=options.seed)
        thinking = [prompt.rstrip().endswith(THINK_OPEN) for prompt in prompts]

        def report(batch: list[int], generated: list[Any]) -> None:
            done({j: {**g.as_dict(), "truncated": truncated[j]} for j, g in zip(batch, generated)})

        generator.generate(encoded, thinking, done=report)

    def _encode(self, texts: Sequence[str]) -> list[list[int]]:
        return [list(ids) for ids in self.tokenizer(list(texts), add_special_tokens=False)["input_ids"]]


def check_tiny(values: Mapping[str, Any]) -> None:
    """llm-tiny's attention heads must divide its hidden size (said before anything is built)."""
    if values["tiny_hidden_size"] % values["tiny_num_heads"]:
        raise ClueError(f"setting 'tiny_num_heads' ({values['tiny_num_heads']}) must divide tiny_hidden_size "
                        f"({values['tiny_hidden_size']})")


BACKEND = (
    BackendInfo("llm", "any causal LM (transformers), llm:<hub id or local folder>: likelihood or generation, "
                "zero- or few-shot, no training", COMMON, TransformersBackend,
                argument="a checkpoint: llm:<hub id or local folder>", catalogue=CATALOGUE),
    BackendInfo("llm-tiny", "offline tiny random Llama with a character tokenizer built from the task's texts",
                COMMON + TINY, TransformersBackend, check=check_tiny, size_class="toy"),
)
