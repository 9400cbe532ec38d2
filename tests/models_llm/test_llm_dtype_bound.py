"""bf16 against fp32 on llm-tiny's shape: the log-likelihoods ``llm:`` scores differ by a bounded amount.

The same weights are scored by :class:`LikelihoodScorer` twice, as the model loads under
``dtype=float32`` and under ``dtype=bfloat16``. Measured on an AMD EPYC Zen 4 (native
AVX-512 BF16), seeds 0-5, 8 prompts of 20-60 characters with 3 choices of 1-5 characters each:
the largest |Δ| per token of a choice was 0.0021, per choice 0.0046, the mean per choice
0.0013 (``tests`` setup as below). The bounds are about 5x that: a CPU without native bf16
emulates it (rounding to bf16 the same, accumulating in fp32 as the native kernels do), and
summation orders differ between kernels. A model that silently stayed fp32 fails the lower bound.
"""

from __future__ import annotations

import copy
import random

import pytest

PER_TOKEN_BOUND = 0.01
MEAN_BOUND = 0.0065
TEXT = "判断两个问题是否相同阅读短文回答问题选择正确答案的选项今天天气很好我们一起去公园散步吧"


def questions(seed: int) -> list[tuple[str, tuple[str, ...]]]:
    rng = random.Random(seed)
    made = []
    for _ in range(8):
        prompt = "".join(rng.choice(TEXT) for _ in range(rng.randint(20, 60)))
        made.append((prompt, tuple("".join(rng.choice(TEXT) for _ in range(rng.randint(1, 5))) for _ in range(3))))
    return made


@pytest.mark.parametrize("seed", [0, 3, 5])
def test_bf16_log_likelihoods_stay_within_the_bound_of_fp32(seed: int) -> None:
    import torch

    from clue_models_llm.scoring import LikelihoodScorer, encode_requests
    from clue_models_llm.settings import TINY
    from clue_models_llm.tiny import build_model

    model, tokenizer = build_model([TEXT], {s.name: s.default for s in TINY}, seed)
    half = copy.deepcopy(model).to(torch.bfloat16)
    assert half.dtype == torch.bfloat16
    items = questions(seed)
    scored = {}
    for name, loaded in (("fp32", model), ("bf16", half)):
        requests = encode_requests(tokenizer, items, bos=tokenizer.bos_token_id, fallback=tokenizer.eos_token_id)
        scored[name] = [s.logprobs for s in LikelihoodScorer(loaded, 4, tokenizer.pad_token_id).score(requests)]
    lengths = [len(choice) for _, choices in items for choice in choices]  # one token per character
    deltas = [abs(a - b) for x, y in zip(scored["fp32"], scored["bf16"]) for a, b in zip(x, y)]
    assert len(deltas) == len(lengths) == 24
    per_token = [delta / length for delta, length in zip(deltas, lengths)]
    assert max(per_token) <= PER_TOKEN_BOUND, max(per_token)
    assert sum(deltas) / len(deltas) <= MEAN_BOUND, deltas
    assert max(deltas) > 1e-5  # bf16 really computed: the same numbers would mean the model stayed fp32
