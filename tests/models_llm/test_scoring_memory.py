"""Scoring applies the output head in bounded chunks and still equals scoring each choice alone.

The largest block of logits is observed at the head itself (a forward hook on the model's
output embeddings), so the bound holds whatever the scorer believes it computes. A tiny
Gemma 3 with a 4-token sliding window checks the per-layer-kind tree masks on prompts longer
than the window.
"""

from __future__ import annotations

import random

import pytest
import torch

from clue_models_llm import chunked_head
from clue_models_llm.scoring import ChoiceRequest, LikelihoodScorer, score_separately
from tests.models_llm.test_llm_scoring import TOLERANCE, tiny_model


def many_choices(rng: random.Random, vocab: int, examples: int, choices: int) -> list[ChoiceRequest]:
    def ids(low: int, high: int) -> tuple[int, ...]:
        return tuple(rng.randrange(5, vocab) for _ in range(rng.randint(low, high)))

    return [ChoiceRequest(ids(3, 30), tuple(ids(1, 5) for _ in range(choices))) for _ in range(examples)]


def largest_head_output(model):
    """A hook on the output head recording the largest logits tensor it returns."""
    seen = [0]

    def hook(_module, _inputs, output):
        seen[0] = max(seen[0], output.numel())

    return seen, model.get_output_embeddings().register_forward_hook(hook)


def check_against_separate(model, requests, scored, prefix_stats):
    for request, got in zip(requests, scored):
        reference = score_separately(model, request)
        assert got.logprobs == pytest.approx(reference.logprobs, abs=TOLERANCE)
        if prefix_stats:
            assert got.prefix_logprob == pytest.approx(reference.prefix_logprob, abs=TOLERANCE)


@pytest.mark.parametrize(("tree", "prefix_stats"), [(True, False), (False, False), (True, True)])
def test_many_choices_are_scored_in_bounded_chunks(tree, prefix_stats) -> None:
    model, _ = tiny_model(["天地玄黄宇宙洪荒日月盈昃辰宿列张寒来暑往秋收冬藏"])
    vocab = model.get_output_embeddings().weight.shape[0]
    requests = many_choices(random.Random(3), vocab, examples=3, choices=119)
    budget = 7 * vocab  # seven positions of logits at a time
    scorer = LikelihoodScorer(model, batch_size=4, prefix_stats=prefix_stats, tree=tree, head_budget=budget)
    assert scorer.head.direct  # llama: decoder + head is the model's own forward
    seen, handle = largest_head_output(model)
    try:
        scored = scorer.score(requests)
    finally:
        handle.remove()
    scored_positions = sum(len(c) for r in requests for c in r.continuations)
    assert 0 < seen[0] <= budget < scored_positions * vocab
    check_against_separate(model, requests, scored, prefix_stats)


def test_chunked_head_equals_one_pass_of_the_head() -> None:
    model, _ = tiny_model(["天地玄黄宇宙洪荒"])
    vocab = model.get_output_embeddings().weight.shape[0]
    hidden = torch.randn(40, model.config.hidden_size)
    index = torch.randint(0, 40, (90,))
    targets = torch.randint(0, vocab, (90,))
    with torch.inference_mode():
        whole = torch.log_softmax(model.get_output_embeddings()(hidden).float(), dim=-1)[index, targets]
        for budget in (vocab, 3 * vocab, 64 * vocab):
            head = chunked_head.Head(model, budget=budget)
            sizes: list[int] = []
            got = head.picked(hidden, index, targets, observe=sizes.append)
            assert torch.allclose(got, whole, atol=1e-5)
            assert max(sizes) <= budget
            assert sum(sizes) == len(torch.unique(index)) * vocab  # each state's head computed once


def tiny_gemma(window: int):
    from transformers import Gemma3ForCausalLM, Gemma3TextConfig

    config = Gemma3TextConfig(vocab_size=300, hidden_size=32, intermediate_size=64, num_hidden_layers=4,
                              num_attention_heads=2, num_key_value_heads=1, head_dim=16, sliding_window=window,
                              layer_types=["sliding_attention", "sliding_attention", "full_attention",
                                           "sliding_attention"], max_position_embeddings=256,
                              final_logit_softcapping=30.0, attn_implementation="sdpa")
    torch.manual_seed(0)
    return Gemma3ForCausalLM(config).eval()


def test_sliding_window_tree_equals_separate_scores(monkeypatch) -> None:
    """Prompts longer than the window, padded to different widths: the tree pass with one mask per layer kind."""
    model = tiny_gemma(window=4)
    requests = many_choices(random.Random(5), 300, examples=5, choices=6)
    scorer = LikelihoodScorer(model, batch_size=5, tree=True)
    assert scorer.head.direct and scorer.head.softcap == 30.0

    def refused(*args, **kwargs):
        raise AssertionError("the tree pass should have scored these")

    monkeypatch.setattr(LikelihoodScorer, "_continue_repeated", refused)
    check_against_separate(model, requests, scorer.score(requests), prefix_stats=False)


def test_sliding_window_repeated_rows_equal_separate_scores() -> None:
    model = tiny_gemma(window=4)
    requests = many_choices(random.Random(6), 300, examples=4, choices=5)
    check_against_separate(model, requests, LikelihoodScorer(model, batch_size=4, tree=False).score(requests),
                           prefix_stats=False)


@pytest.mark.parametrize("window", [0, 16])
def test_an_instruction_every_prompt_shares_runs_once(monkeypatch, window) -> None:
    """IFLYTEK's shape: a long instruction, then each question's own text; with and without a sliding window."""
    model = tiny_gemma(window=window) if window else tiny_model(["天地玄黄宇宙洪荒"])[0]
    vocab = model.get_output_embeddings().weight.shape[0]
    rng = random.Random(9)
    instruction = tuple(rng.randrange(5, vocab) for _ in range(80))
    requests = [ChoiceRequest(instruction + tuple(rng.randrange(5, vocab) for _ in range(rng.randint(1, 12))),
                              tuple(tuple(rng.randrange(5, vocab) for _ in range(rng.randint(1, 4)))
                                    for _ in range(30))) for _ in range(5)]
    scorer = LikelihoodScorer(model, batch_size=2, tree=True)
    assert scorer.shared_prefix(requests) == 80
    passes = []
    real_base = LikelihoodScorer._base
    monkeypatch.setattr(LikelihoodScorer, "_base", lambda self, tokens: passes.append(len(tokens))
                        or real_base(self, tokens))
    monkeypatch.setattr(LikelihoodScorer, "score_batch", None)  # not the padded batches
    reported = []
    scored = scorer.score(requests, done=lambda batch, _: reported.append(batch))
    assert passes == [80] and reported == [[0, 1], [2, 3], [4]]
    check_against_separate(model, requests, scored, prefix_stats=False)
