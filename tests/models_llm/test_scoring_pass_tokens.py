"""A prompt pass holds at most ``PASS_TOKENS`` prompt tokens (padding included), and splitting
there changes no score: the bound that set C3's peak memory with gemma at batch 16."""

from __future__ import annotations

import random

import pytest

from clue_models_llm import scoring
from clue_models_llm.scoring import LikelihoodScorer
from tests.models_llm.test_llm_scoring import tiny_model
from tests.models_llm.test_scoring_memory import check_against_separate, many_choices


@pytest.mark.parametrize("tree", [True, False])
def test_prompt_passes_stay_within_pass_tokens_and_score_the_same(monkeypatch, tree) -> None:
    model, _ = tiny_model(["天地玄黄宇宙洪荒日月盈昃辰宿列张寒来暑往秋收冬藏"])
    vocab = model.get_output_embeddings().weight.shape[0]
    requests = many_choices(random.Random(5), vocab, examples=8, choices=3)
    unbounded = LikelihoodScorer(model, batch_size=8, tree=tree).batches(requests)
    assert len(unbounded) == 1  # without the cap, all eight prompts share one pass
    monkeypatch.setattr(scoring, "PASS_TOKENS", 60)
    scorer = LikelihoodScorer(model, batch_size=8, tree=tree)
    batches = scorer.batches(requests)
    assert len(batches) > 1
    assert sorted(i for batch in batches for i in batch) == list(range(len(requests)))
    for batch in batches:  # a prompt longer than the cap runs alone
        width = max(len(requests[i].prefix) for i in batch)
        assert len(batch) == 1 or len(batch) * width <= 60
    check_against_separate(model, requests, scorer.score(requests), prefix_stats=False)
