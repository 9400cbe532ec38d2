"""``gguf:<file>``: a GGUF file run by llama.cpp in this process, on its quantised weights.

The learner asks it what it asks ``llm:`` (same prompts, cache, predictions and metrics);
only the engine differs. ``llm:<file>.gguf`` dequantises the same file to float32 and runs
transformers on it (the exact reference, and slow on a CPU); ``gguf:`` computes on the
quantised blocks with llama.cpp's kernels, so its log-likelihoods differ from ``llm:``'s in
the arithmetic (quantised activations), not in what is asked.

Tokens follow ``llm:``'s rules: the prompt and each ``prompt + choice`` are tokenized whole
without special tokens (llama.cpp's tokenizer, special tokens' text read as tokens, as
transformers does), the tokens they share are the prefix, the rest of each is that choice's
continuation (:func:`split`, the rule of :func:`clue_models_llm.scoring.build_request`,
restated here so that this backend never imports torch); BOS first where the vocabulary
adds one. Likelihood: the prefix is evaluated once per question with logits only at its
last position (every position for ``ppl``), each choice continues from its cache (the one
before trimmed off) with logits only at the positions that predict its tokens, and each
row is log-softmaxed on its own with numpy (:mod:`~clue_models_llm.backends.llamacpp_engine`
says why every question is computed as if alone). Generation: greedy (or seeded sampling),
with ``llm:``'s stop strings, token budgets and thinking rules; the learner extracts.

``llama_cpp`` is imported in :meth:`LlamaCppBackend.load` only (listing models must not pay
for it); it is the ``gguf`` extra of ``clue-models-llm``. The cache identity holds the file's
SHA-256, the llama-cpp-python version and llama.cpp's system info (the CPU features its loaded
CPU backend computes with: an AVX2 build's sums differ from an AVX-512 build's in the last
digits, so one's cached scores are not another's) and the threads it computes with (how llama.cpp
splits a matrix product's tiles among its threads moves some scores: up to 0.25 on one of 50
C3-format questions' choices between 1 and 2 threads); ``n_ctx`` and ``n_batch`` key it as settings.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clue_core.plugin import ClueError, Setting
from clue_models_llm.backend import Backend, BackendInfo, Done
from clue_models_llm.settings import COMMON, Settings

if TYPE_CHECKING:  # for type checkers only: listing models imports this module, never clue_core.context
    from clue_core.plugin import RunContext
    from clue_models_llm.backends.llamacpp_engine import Engine
    from clue_models_llm.exchange import Description, GenerateOptions, ScoreRequest

MISSING = "gguf: models need llama-cpp-python: pip install 'clue-models-llm[gguf]'"
#: Prompt positions one call evaluates with ``ppl`` (each keeps a logit row: 1 MB a row for 262k tokens).
PPL_ROWS = 32
#: Tokens generation may add past its budgets (as ``llm:``: a closed think block, a stop string's last pieces).
GENERATION_SLACK = 8
#: Process-wide: the engine of the last file loaded, reused by the next task of the same run.
_LOADED: dict[tuple[Any, ...], tuple[Engine, dict[str, Any]]] = {}


def available_cores() -> int:
    """The cores this process may run on (its affinity mask, not the machine's count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def check_file(source: str) -> Path:
    """The GGUF file ``source`` names, or one line saying why it is not one (before llama.cpp is loaded)."""
    from clue_models_llm.gguf_file import MAGIC

    path = Path(source).expanduser()
    if not path.exists():
        raise ClueError(f"{source}: no such GGUF file")
    if not path.is_file():
        raise ClueError(f"{source}: not a file (gguf:<file> names one GGUF file)")
    with path.open("rb") as handle:
        head = handle.read(4)
    if head != MAGIC:
        raise ClueError(f"{source}: not a GGUF file (it starts with {head!r}, not {MAGIC!r})")
    return path


def split(prompt: Sequence[int], wholes: Sequence[Sequence[int]], *, bos: int | None, max_positions: int
          ) -> tuple[list[int], list[list[int]], int]:
    """``(prefix, continuations, truncated)`` of one question: the rule of ``scoring.build_request``.

    The prefix is what the prompt and every ``prompt + choice`` share (at least one token of
    each choice left to score), ``bos`` first where given. Too long an input loses the
    prefix's oldest tokens after the BOS, counted. An empty prefix (no BOS, a prompt sharing no
    token with a choice) is the caller's to fill (``llm:`` puts its first end-of-sequence token there).
    """
    shared = min(_common(prompt, whole) for whole in wholes)
    shared = min(shared, min(len(whole) for whole in wholes) - 1)
    prefix = list(wholes[0][:shared])
    continuations = [list(whole[shared:]) for whole in wholes]
    head = [bos] if bos is not None else []
    truncated = 0
    longest = len(head) + len(prefix) + max(len(c) for c in continuations)
    if longest > max_positions:
        truncated = min(len(prefix), longest - max_positions)
        prefix = prefix[truncated:]
    return head + prefix, continuations, truncated


def _common(a: Sequence[int], b: Sequence[int]) -> int:
    n = min(len(a), len(b))
    for i in range(n):
        if a[i] != b[i]:
            return i
    return n


class LlamaCppBackend(Backend):
    """A GGUF file in llama.cpp (``source``: the file). Every prompt can be scored in process."""

    def __init__(self, source: str | None, values: Mapping[str, Any], name: str) -> None:
        if not source:
            raise ClueError("model 'gguf' needs a file: gguf:<file>.gguf")
        self.path = check_file(source)
        self.source = source
        self.values = dict(values)
        self.settings = Settings.of(self.values)
        self.name = name
        self.engine: Any = None
        self.tokenizer: Any = None
        self._identity: dict[str, Any] = {}
        self.bos: int | None = None
        self.eos_ids: list[int] = []
        self.threads = 0
        self.file_type = ""

    # -- setting up -----------------------------------------------------------------------

    def load(self, context: RunContext, texts: Callable[[], Sequence[str]]) -> None:
        try:
            import llama_cpp
        except ImportError:
            raise ClueError(MISSING) from None
        from clue_models_llm.backends.llamacpp_engine import Engine, TemplateTokenizer
        from clue_models_llm.loading import _file_digest, fingerprint

        values = self.values
        self.threads = values["n_threads"] or available_cores()
        key = (str(self.path.resolve()), fingerprint(str(self.path)), values["n_ctx"], values["n_batch"])
        if key in _LOADED:
            engine, identity = _LOADED[key]
        else:
            for old, _ in _LOADED.values():
                old.close()
            _LOADED.clear()
            engine = Engine(str(self.path), n_ctx=values["n_ctx"], n_batch=values["n_batch"], n_threads=self.threads)
            identity = {"engine": "llama.cpp", "llama_cpp_python": str(llama_cpp.__version__), "source": "gguf",
                        "path": str(self.path.resolve()), "sha256": _file_digest(self.path)}
            _LOADED[key] = (engine, identity)
        engine.set_threads(self.threads)
        self.engine = engine
        self._identity = {**identity, "system_info": engine.system_info(), "n_threads": self.threads}
        special = engine.special()
        self.bos, self.eos_ids = special["bos"], special["eos_ids"]
        self.tokenizer = TemplateTokenizer(engine, engine.metadata.get("tokenizer.chat_template"), special["text"])
        self.file_type = engine.describe()

    def describe(self) -> Description:
        """The file's digest and the engine's version; its chat template, rendered as ``llm:`` renders one."""
        from clue_models_llm.exchange import Description

        engine = self.engine
        info = {"eos_token_ids": self.eos_ids,
                "engine": {"llama_cpp_python": self._identity.get("llama_cpp_python"), "n_threads": self.threads,
                           "n_ctx": engine.n_ctx if engine else None,
                           "n_batch": engine.n_batch if engine else self.values["n_batch"]}}
        return Description(identity=dict(self._identity), device=f"cpu (llama.cpp, {self.threads} threads)",
                           dtype=self.file_type, info=info, tokenizer=self.tokenizer, adds_bos=self.bos is not None)

    # -- computing ------------------------------------------------------------------------

    def score_choices(self, requests: Sequence[ScoreRequest], *, ppl: bool, done: Done) -> None:
        """Question by question, each reported when its choices are scored."""
        for index, request in enumerate(requests):
            prefix, continuations, truncated = self.question_tokens(request.prompt, request.choices)
            done({index: {**self._score(prefix, continuations, ppl), "truncated": truncated}})

    def question_tokens(self, prompt: str, choices: Sequence[str]) -> tuple[list[int], list[list[int]], int]:
        """``(prefix, continuations, truncated)``: the token ids :meth:`score_choices` evaluates for one question
        (the prefix from position 0 in calls of ``n_batch``, each continuation but its last token in a call
        after it). Public so that a comparison with another llama.cpp front end (its server) can send the
        same ids in the same calls."""
        engine = self.engine
        ids = engine.tokenize(prompt)
        wholes = [engine.tokenize(prompt + choice) for choice in choices]
        bos = self.bos if self.bos is not None and ids[:1] != [self.bos] else None
        prefix, continuations, truncated = split(ids, wholes, bos=bos, max_positions=engine.n_ctx)
        if not prefix:
            prefix = [self.eos_ids[0] if self.eos_ids else 0]
        return prefix, continuations, truncated

    def _score(self, prefix: list[int], continuations: list[list[int]], ppl: bool) -> dict[str, Any]:
        engine = self.engine
        engine.trim(0)
        step = min(PPL_ROWS, engine.n_batch) if ppl else engine.n_batch
        firsts = {c[0] for c in continuations}
        first: dict[int, float] = {}
        prefix_sum = 0.0
        for start in range(0, len(prefix), step):
            part = prefix[start:start + step]
            last = start + len(part) == len(prefix)
            rows = engine.decode(part, [ppl or (last and i == len(part) - 1) for i in range(len(part))])
            for row in rows:
                logprobs = engine.logprobs(row)
                position = start + row
                if position + 1 < len(prefix):
                    prefix_sum += float(logprobs[prefix[position + 1]])
                else:
                    first = {token: float(logprobs[token]) for token in firsts}
        totals = []
        for continuation in continuations:
            total = first[continuation[0]]
            rest = continuation[:-1]
            if rest:
                engine.trim(len(prefix))
                for start in range(0, len(rest), engine.n_batch):
                    part = rest[start:start + engine.n_batch]
                    for row in engine.decode(part, [True] * len(part)):
                        total += float(engine.logprobs(row)[continuation[start + row + 1]])
            totals.append(total)
        return {"logprobs": totals, "tokens": [len(c) for c in continuations],
                "prefix_logprob": prefix_sum if ppl else None, "prefix_tokens": len(prefix) - 1 if ppl else None}

    def generate(self, prompts: Sequence[str], options: GenerateOptions, *, done: Done) -> None:
        """Prompt by prompt; a prompt too long for the context loses its oldest tokens (counted)."""
        from clue_models_llm.backends.llamacpp_engine import Decoder
        from clue_models_llm.extract import THINK_OPEN

        engine = self.engine
        budget = options.max_new_tokens + options.thinking_tokens + GENERATION_SLACK
        decoder = Decoder(engine, options, self.eos_ids)
        for index, prompt in enumerate(prompts):
            ids = engine.tokenize(prompt)
            if self.bos is not None and ids[:1] != [self.bos]:
                ids = [self.bos, *ids]
            cut = 0
            if len(ids) + budget > engine.n_ctx:
                cut = min(len(ids) - 1, len(ids) + budget - engine.n_ctx)
                ids = ids[:1] + ids[1 + cut:] if self.bos is not None else ids[cut:]
            import hashlib  # here, not at the top: listing models reads this module

            seed = int.from_bytes(hashlib.sha256(f"{options.seed}:{ids}".encode()).digest()[:8], "little")
            entry = decoder.run(ids, thinking=prompt.rstrip().endswith(THINK_OPEN), seed=seed)
            done({index: {**entry, "truncated": cut}})


#: What llama.cpp decides itself (the file's quantisation is its dtype; one process, one CPU context).
NOT_FOR_GGUF = frozenset({"dtype", "device_map", "trust_remote_code", "revision", "eval_batch_size"})

#: The engine's settings. ``n_ctx`` (what is truncated) and ``n_batch`` (how a prompt is split into calls, which
#: moves its logits) key the cache; ``n_threads`` moves some scores too (llama.cpp's work split among threads),
#: and the count it resolves to (0: this process's cores) is in the identity instead, as the value does not say.
ENGINE: tuple[Setting, ...] = (
    Setting("n_threads", int, 0, "gguf: CPU threads llama.cpp computes with (0: the cores this process may use)",
            minimum=0, maximum=1024),
    Setting("n_ctx", int, 4096, "gguf: context length in tokens (0: the model's training context; llama.cpp rounds "
            "it up to a multiple of 256); longer prompts lose their oldest tokens, counted as truncated", minimum=0,
            cache_key=True),
    Setting("n_batch", int, 512, "gguf: most tokens llama.cpp evaluates in one call (a prompt runs in calls of this "
            "many; at most n_ctx)", minimum=1, maximum=8192, cache_key=True),
)

#: Settings of ``gguf:<file>``: the family's prompt, scoring and decoding settings, less what llama.cpp decides.
GGUF: tuple[Setting, ...] = (*(s for s in COMMON if s.name not in NOT_FOR_GGUF), *ENGINE)

BACKEND = BackendInfo(
    "gguf", "a GGUF file run by llama.cpp in process, gguf:<file>.gguf, on its quantised weights (pip install "
    "'clue-models-llm[gguf]'): the prompts, cache and predictions of llm:, likelihood from the logits of only the "
    "positions each choice needs", GGUF, LlamaCppBackend, argument="a GGUF file: gguf:<file>.gguf")
