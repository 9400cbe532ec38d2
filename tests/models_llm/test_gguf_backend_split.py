"""``gguf:`` splits a question's tokens into prefix and continuations by ``llm:``'s rule, restated without torch.

``clue_models_llm.backends.llamacpp.split`` must equal ``scoring.build_request`` (what ``llm:``
and ``vllm:`` score) on every input, truncation included, so that the two families are asked
the same continuations; and ``gguf:``'s settings, declared beside it, key the cache where they
change answers.
"""

from __future__ import annotations

import random

import pytest

from clue_models_llm.backends.llamacpp import BACKEND, LlamaCppBackend, split


def cases(seed: int, count: int):
    rng = random.Random(seed)
    for _ in range(count):
        vocabulary = rng.randint(2, 6)  # few distinct tokens: shared prefixes of every length
        prompt = [rng.randrange(vocabulary) for _ in range(rng.randint(0, 12))]
        wholes = []
        for _ in range(rng.randint(1, 4)):
            keep = rng.randint(0, len(prompt))
            wholes.append(prompt[:keep] + [rng.randrange(vocabulary) for _ in range(rng.randint(1, 5))])
        yield prompt, wholes, rng.choice([None, 99]), rng.choice([None, 4, 8, 64])


@pytest.mark.parametrize("seed", range(4))
def test_split_equals_llms_build_request(seed: int) -> None:
    from clue_models_llm.scoring import build_request

    for prompt, wholes, bos, limit in cases(seed, 250):
        expected = build_request(prompt, wholes, bos=bos, fallback=7, max_positions=limit)
        prefix, continuations, truncated = split(prompt, wholes, bos=bos, max_positions=limit or 1 << 30)
        prefix = prefix or [7]  # the caller's fallback, as LlamaCppBackend.score_choices fills it
        assert (tuple(prefix), tuple(map(tuple, continuations)), truncated) == (
            expected.prefix, expected.continuations, expected.truncated), (prompt, wholes, bos, limit)


def test_settings_and_refusals_before_anything_loads(tmp_path) -> None:
    declared = {s.name: s for s in BACKEND.settings}
    assert declared["n_ctx"].cache_key and declared["n_batch"].cache_key and not declared["n_threads"].cache_key
    assert not {"dtype", "device_map", "eval_batch_size"} & set(declared)
    from clue_core.plugin import ClueError

    with pytest.raises(ClueError, match="needs a file"):
        LlamaCppBackend(None, {}, "gguf")
    with pytest.raises(ClueError, match="not a file"):
        LlamaCppBackend(str(tmp_path), {}, "gguf")
    (tmp_path / "x.gguf").write_bytes(b"GGML....")
    with pytest.raises(ClueError, match="not a GGUF file"):
        LlamaCppBackend(str(tmp_path / "x.gguf"), {}, "gguf")
