"""The settings of ``vllm:<hub id or folder>``, declared for the kernel (no vLLM, no torch here).

The prompt, scoring and decoding settings are the family's (:data:`~clue_models_llm.settings.COMMON`),
so ``vllm:`` and ``llm:`` are asked the same questions; what only an in-process transformers
model reads (``device_map``, ``eval_batch_size``: vLLM schedules its own batches) is left out,
and the engine's own settings are added. None of the engine settings keys the result cache:
they change how fast answers come, not which model answers (the dtype, which does, is in
the backend's identity and keys it through ``dtype``).
"""

from __future__ import annotations

from clue_core.plugin import Setting
from clue_models_llm.settings import COMMON

#: What vLLM schedules or places itself.
NOT_FOR_VLLM = frozenset({"device_map", "eval_batch_size"})

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

#: Settings of ``vllm:<model>``.
VLLM: tuple[Setting, ...] = (*(s for s in COMMON if s.name not in NOT_FOR_VLLM), *ENGINE)
