"""The settings the LLM learner reads, declared for the kernel (no torch here).

The kernel merges the layers, converts every value once and rejects unknown names and
bad values with one line. Settings that change what the model is asked or what comes
back are marked ``cache_key``: the per-example result cache is keyed by their values
(with the model's identity and the rendered prompt), so a changed value never reuses an
old answer. Encoder settings (``max_length``, ``learning_rate``, ``batch_size``…) are not
declared, so the tasks' reference values for encoders never reach these models: prompts
are as long as the model allows, and ``eval_batch_size`` is the number of examples
scored or generated together.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from clue_core.plugin import Setting

MODES = ("loglikelihood", "generate")
SCORES = ("sum", "mean", "ppl", "mean_all")
#: Score rules that need the prompt's own log-probability (the prefix pass keeps all its logits).
PROMPT_SCORES = ("ppl", "mean_all")
#: ``bf16-mixed``: bf16 weights, float32 activations (:func:`clue_models_llm.cpu_bf16.to_mixed`), what auto is
#: on a CPU with native bf16; ``bfloat16``: every tensor bf16, as transformers loads it.
DTYPES = ("auto", "float32", "bf16-mixed", "bfloat16", "float16")
#: The most ``max_new_tokens`` (and ``thinking_tokens``) a run may ask for: a bound declared, so an absurd
#: value is refused at planning; llm-tiny never writes an end-of-sequence token, so
#: ``max_new_tokens=99999999999999999999`` generated for as long as the machine let it.
MAX_TOKENS = 32768


def _key(name: str, kind: type, default: Any, help: str, **more: Any) -> Setting:
    return Setting(name, kind, default, help, cache_key=True, **more)


#: Settings of every LLM: the family, the catalogue and the offline model.
COMMON: tuple[Setting, ...] = (
    _key("mode", str, "loglikelihood", "loglikelihood: score every choice (labels' words, options) after the "
         "prompt and pick the best; generate: let the model answer and extract the answer from its text",
         choices=MODES, report=True),
    Setting("score", str, "sum", "loglikelihood: how choices compare: sum (summed log-probability of the "
            "choice), mean (per token), ppl (mean log-probability of the whole prompt + choice over its predicted "
            "tokens), mean_all (OpenCompass's PPL loss: the whole prompt + choice's summed log-probability over "
            "its token count including BOS)", choices=SCORES, report=True),
    # not a cache key: a preset's prompts and choices are in every request's key already
    Setting("protocol", str, "clue-core", "whose protocol the task is asked under: clue-core (the task's own "
            "prompt) or one of the task's presets, e.g. opencompass:CLUE_C3_ppl_e24a31 (another framework's "
            "config reproduced: template, label words, score rule, post-processing)", report=True),
    _key("shots", int, 0, "few-shot: training examples drawn with the run's seed, shown before each question",
         minimum=0, report=True),
    _key("chat", bool, False, "wrap the prompt in the model's chat template (instruction-tuned models)",
         report=True),
    _key("thinking", bool, False, "reasoning models: switch thinking on where the chat template has a switch "
         "(enable_thinking); <think>…</think> is always stripped before answers are extracted", report=True),
    _key("max_new_tokens", int, 64, "generate: most tokens of the answer (after any thinking)", minimum=1,
         maximum=MAX_TOKENS),
    _key("thinking_tokens", int, 2048, "generate: most tokens inside <think>…</think>; then the block is closed "
         "and the answer begins", minimum=0, maximum=MAX_TOKENS),
    _key("stop", str, "\\n", "generate: strings that end an answer, separated by | (\\n is a newline, \\| a "
         "bar; empty: only the end-of-sequence token); checked after the answer's first character"),
    _key("temperature", float, 0.0, "generate: 0 is greedy (the default); above 0 samples with the run's seed",
         minimum=0.0, report=True),
    Setting("eval_batch_size", int, 16, "examples scored or generated together per process", minimum=1),
    _key("dtype", str, "auto", "weights' dtype: auto is bfloat16 (float16 without bf16) on a GPU; on the CPU "
         "bf16-mixed (bf16 weights and matmuls, float32 activations) where it has native bf16 (AVX-512 BF16, AMX) "
         "and the checkpoint is stored in bfloat16, else float32 (llm-tiny and .gguf files: float32); bfloat16 "
         "is every tensor in bf16; --dry-run shows which", choices=DTYPES),
    Setting("device_map", str, "", "'' puts the model on this process's device; 'auto' spreads a model larger "
            "than one GPU over all visible GPUs (one process only)"),
    Setting("traditional", bool, False, "convert answers to Traditional Chinese (OpenCC s2tw) before scoring "
            "(tasks in Traditional characters); needs opencc-python-reimplemented or opencc", report=True),
    Setting("result_cache", bool, True, "reuse and store each example's result in the cache folder "
            "($CLUE_HOME/cache or --cache), keyed by the model's identity, the prompt and these settings"),
    Setting("trust_remote_code", bool, False, "allow checkpoints that ship their own model code"),
    _key("revision", str, "", "hub revision (branch, tag or commit) of llm:<hub id>; '' is the default branch"),
    # not a cache key: each reordered question is a request of its own, so a run with circular=off shares them;
    # not a report setting: the predictions are circular=off's, so a report keeps the run in the same row
    Setting("circular", int, "off", "multiple choice: also ask each labelled question with its choices reordered "
            "(all: every rotation, OpenCompass's CircularEval; N: N seeded orders, the original first) and score "
            "circular accuracy and each position's pick rate; predictions stay the original order's",
            also=("off", "all"), minimum=2, maximum=64, schedule=True),  # --resume insists it is unchanged
    # not a cache key: each variant's prompt is in its own requests' keys, so a default-only run shares them;
    # not a report setting: the predictions are the default prompt's (clue_models_llm.variants)
    Setting("prompt_variants", str, "default", "also ask each labelled example under the task's prompt variants "
            "(all, or names joined by commas; default: only the task's prompt) and score the spread of the primary "
            "metric across prompts (mean ± std); predictions stay the default prompt's", schedule=True),
)

#: Settings of the offline model ``llm-tiny`` only: its shape.
TINY: tuple[Setting, ...] = (
    _key("tiny_hidden_size", int, 64, "llm-tiny: hidden size", minimum=1),
    _key("tiny_num_layers", int, 2, "llm-tiny: decoder layers", minimum=1),
    _key("tiny_num_heads", int, 2, "llm-tiny: attention heads (must divide tiny_hidden_size)", minimum=1),
    _key("tiny_intermediate_size", int, 128, "llm-tiny: feed-forward width", minimum=1),
)


#: ``openai:<model>``: modes a server may offer (auto: likelihood where the server gives prompt
#: log-probabilities, else generation, recorded in the run's model_info).
SERVER_MODES = (*MODES, "auto")
#: What only a local model reads (weights, devices, local decoding switches).
LOCAL_ONLY = frozenset({"dtype", "device_map", "trust_remote_code", "revision", "thinking", "thinking_tokens",
                        "eval_batch_size"})

#: ``answers:<file>``: how records find their questions: by id where the record has one, else by prompt text;
#: or only one way.
MATCHES = ("auto", "id", "prompt")

#: Settings of ``openai:<model>``: the shared prompt and decoding settings, and the client's.
SERVER: tuple[Setting, ...] = (
    _key("mode", str, "auto", "loglikelihood: score every choice through the completions endpoint (echo + "
         "logprobs); generate: let the model answer; auto: likelihood where the server gives prompt "
         "log-probabilities, else generation (recorded)", choices=SERVER_MODES, report=True),
    *(s for s in COMMON if s.name not in LOCAL_ONLY and s.name != "mode"),
    Setting("base_url", str, "", "the server's OpenAI-compatible API root, e.g. http://127.0.0.1:8000/v1 "
            "(default: $OPENAI_BASE_URL)", env="OPENAI_BASE_URL"),
    # secret_env: the kernel redacts the named variable's value from every file and line of the run
    Setting("api_key_env", str, "OPENAI_API_KEY", "the environment variable that holds the API key (the key "
            "itself is never a setting, and its value is replaced by *** in everything the run writes or "
            "prints); unset: no key sent", secret_env=True),
    Setting("concurrency", int, 8, "requests in flight at once", minimum=1, maximum=1024),
    Setting("rpm", int, 0, "most requests started per minute (0: no limit)", minimum=0),
    Setting("timeout", float, 120.0, "seconds to wait for one answer before retrying it", minimum=0.1),
    Setting("retries", int, 6, "retries of one request after 429, 5xx, a dropped connection or a timeout "
            "(backoff doubling from 1 s, or the server's Retry-After)", minimum=0),
    Setting("price_prompt", float, 0.0, "price per million prompt tokens (for the cost in metrics.json)",
            minimum=0.0),
    Setting("price_completion", float, 0.0, "price per million completion tokens (reasoning tokens included, "
            "as OpenAI bills them)", minimum=0.0),
    Setting("currency", str, "USD", "the currency of the prices"),
)


@dataclass(frozen=True)
class Settings:
    """The values of :data:`COMMON`, typed (the declarations own the defaults)."""

    mode: str
    score: str
    shots: int
    chat: bool
    thinking: bool
    max_new_tokens: int
    thinking_tokens: int
    stop: str
    temperature: float
    eval_batch_size: int
    dtype: str
    device_map: str
    traditional: bool
    result_cache: bool
    trust_remote_code: bool
    revision: str
    circular: int | str
    prompt_variants: str

    @classmethod
    def of(cls, values: Mapping[str, Any]) -> Settings:
        """Typed values; what a server model does not declare takes its local default."""
        local = {s.name: s.default for s in COMMON}
        return cls(**{f.name: values.get(f.name, local[f.name]) for f in fields(cls)})

    @property
    def stop_strings(self) -> tuple[str, ...]:
        return parse_stop(self.stop)

    def decoding(self) -> dict[str, Any]:
        """What decides the answers, as recorded in the manifest (and part of the cache key)."""
        if self.mode == "loglikelihood":
            return {"mode": self.mode, "score": self.score}
        return {"mode": self.mode, "greedy": self.temperature == 0, "temperature": self.temperature,
                "max_new_tokens": self.max_new_tokens, "thinking_tokens": self.thinking_tokens,
                "stop": list(self.stop_strings)}


def parse_stop(text: str) -> tuple[str, ...]:
    """``"\\n|答案"`` → ``("\\n", "答案")``: ``|`` separates, ``\\n``, ``\\t``, ``\\|`` and ``\\\\`` are escapes."""
    escapes = {"n": "\n", "t": "\t", "|": "|", "\\": "\\"}
    parts: list[str] = []
    current: list[str] = []
    index = 0
    while index < len(text):
        char = text[index]
        if char == "\\" and index + 1 < len(text) and text[index + 1] in escapes:
            current.append(escapes[text[index + 1]])
            index += 2
            continue
        if char == "|":
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
        index += 1
    parts.append("".join(current))
    return tuple(dict.fromkeys(part for part in parts if part))


def complete(declared: tuple[Setting, ...], values: Mapping[str, Any]) -> dict[str, Any]:
    """The declared defaults under ``values`` (the kernel passes every name; Python callers may not)."""
    names = {s.name for s in declared}
    unknown = sorted(set(values) - names)
    if unknown:
        raise TypeError(f"not settings of this model: {', '.join(unknown)}")
    return {**{s.name: s.default for s in declared}, **values}
