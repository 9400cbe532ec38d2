"""Prefix-shared likelihoods equal scoring every prompt + choice on its own (1e-4), also where a
byte-level BPE merges the prompt's last characters with a choice's first."""

from __future__ import annotations

import random

import pytest
import torch

from clue_core.plugin import ClassificationExample, MultipleChoiceExample
from clue_models_llm import tiny
from clue_models_llm.prompts import Renderer
from clue_models_llm.scoring import ChoiceScores, LikelihoodScorer, build_request, encode_requests, score_separately

CHARS = "天地玄黄宇宙洪荒日月盈昃辰宿列张寒来暑往秋收冬藏闰余成岁律吕调阳云腾致雨露结为霜"
TOLERANCE = 1e-4


def tiny_model(texts, seed=0, vocab_tokenizer=None):
    from transformers import LlamaForCausalLM

    tokenizer = vocab_tokenizer or tiny.build_tokenizer(texts)
    config = tiny.tiny_config(len(tokenizer), {"tiny_hidden_size": 32, "tiny_num_layers": 2,
                                               "tiny_num_heads": 2, "tiny_intermediate_size": 64})
    torch.manual_seed(seed)
    return LlamaForCausalLM(config).eval(), tokenizer


def byte_level_bpe(texts, vocab_size=700):
    """A byte-level BPE trained here (no download), wrapped as a transformers tokenizer."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    backend = Tokenizer(models.BPE())
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=list(tiny.SPECIAL_TOKENS),
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    backend.train_from_iterator(texts, trainer=trainer)
    return PreTrainedTokenizerFast(tokenizer_object=backend, pad_token=tiny.PAD, unk_token=tiny.UNK,
                                   bos_token=tiny.BOS, eos_token=tiny.EOS)


def assert_same(model, requests, batch_size, prefix_stats, tree=None):
    scored = LikelihoodScorer(model, batch_size, prefix_stats=prefix_stats, tree=tree).score(requests)
    for request, got in zip(requests, scored):
        reference = score_separately(model, request)
        assert got.logprobs == pytest.approx(reference.logprobs, abs=TOLERANCE)
        assert got.tokens == reference.tokens
        if prefix_stats:
            assert got.prefix_logprob == pytest.approx(reference.prefix_logprob, abs=TOLERANCE)
            assert got.prefix_tokens == reference.prefix_tokens
            for method in ("sum", "mean", "ppl"):
                assert got.scores(method) == pytest.approx(reference.scores(method), abs=TOLERANCE)


def random_items(rng, count):
    return [("".join(rng.choice(CHARS) for _ in range(rng.randint(2, 60))) + "答案：",
             tuple("".join(rng.choice(CHARS) for _ in range(rng.randint(1, 6))) for _ in range(rng.randint(2, 5))))
            for _ in range(count)]


@pytest.mark.parametrize(("prefix_stats", "tree"), [(False, True), (True, True), (False, False)])
def test_prefix_shared_scores_equal_separate_scores(prefix_stats, tree) -> None:
    """Choices side by side after their prompt (one row, 4D mask) or in rows of their own (cache repeated)."""
    rng = random.Random(0)
    items = random_items(rng, 11)
    model, tokenizer = tiny_model([CHARS + "答案："])
    requests = encode_requests(tokenizer, items)
    assert all(len(r.prefix) == len(tokenizer(p, add_special_tokens=False).input_ids) for r, (p, _) in
               zip(requests, items))  # characters: the boundary never moves
    assert_same(model, requests, batch_size=4, prefix_stats=prefix_stats, tree=tree)


def test_a_score_does_not_depend_on_its_batch() -> None:
    items = random_items(random.Random(1), 9)
    model, tokenizer = tiny_model([CHARS + "答案："])
    requests = encode_requests(tokenizer, items)
    alone = [LikelihoodScorer(model, 1).score([r])[0] for r in requests]
    together = LikelihoodScorer(model, 9).score(requests)
    for a, b in zip(alone, together):
        assert a.logprobs == pytest.approx(b.logprobs, abs=1e-5)


def bpe_items(kernel):
    """Real prompts (AFQMC, C3) and prompts ending in a space before English words."""
    afqmc, c3 = Renderer(kernel.task("afqmc")), Renderer(kernel.task("c3"))
    items = [(q.prompt, q.choices) for q in (
        afqmc.render(ClassificationExample(0, "花呗怎么还款", "花呗如何还钱")),
        afqmc.render(ClassificationExample(1, "借呗能提前还吗", "借呗可以提额吗")),
        c3.render(MultipleChoiceExample(2, "男：你去哪儿？\n女：去图书馆。", "女的去哪儿？",
                                        ("图书馆", "书店", "学校"))),
    )]
    items += [("Question: is it raining?\nAnswer: ", ("yes", "no")), ("The capital of France is", (" Paris", " Rome")),
              ("答案：相", ("同", "同意")), ("xyzab", ("c", "cd", "ab"))]
    return items


def test_byte_level_bpe_boundaries(kernel) -> None:
    items = bpe_items(kernel)
    corpus = [prompt + choice for prompt, choices in items for choice in choices] * 20
    corpus += [CHARS, "答案：相同", "答案：不同", "Answer: yes", "Answer: no", "xyzabc", "abcd"] * 50
    tokenizer = byte_level_bpe(corpus)
    model, _ = tiny_model([], seed=3, vocab_tokenizer=tokenizer)
    eos = tokenizer.eos_token_id
    requests = encode_requests(tokenizer, items, fallback=eos)
    moved = 0
    for (prompt, choices), request in zip(items, requests):
        prompt_ids = tokenizer(prompt, add_special_tokens=False).input_ids
        moved += len(request.prefix) < len(prompt_ids)
        # where prompt and choice share no token at all, the end-of-text token stands in front
        prefix = list(request.prefix[1:] if request.prefix == (eos,) else request.prefix)
        for choice, continuation in zip(choices, request.continuations):
            whole = tokenizer(prompt + choice, add_special_tokens=False).input_ids
            # the scored sequence is the natural tokenization of prompt + choice ...
            assert prefix + list(continuation) == whole
            assert tokenizer.decode(prefix + list(continuation)) == prompt + choice
            # ... and every choice's text lies in its continuation
            assert tokenizer.decode(list(continuation)).endswith(choice)
    assert moved >= 2  # the boundary really is hard here: merges cross it
    assert_same(model, requests, batch_size=3, prefix_stats=True)
    assert_same(model, requests, batch_size=3, prefix_stats=False, tree=False)


def test_build_request_edge_cases() -> None:
    # a choice whose tokens merge with the prompt's: the shared prefix stops before the merge
    request = build_request([1, 2, 3], [[1, 2, 9], [1, 2, 3, 4]])
    assert request.prefix == (1, 2) and request.continuations == ((9,), (3, 4))
    # every continuation keeps at least one token; an empty prefix becomes the fallback token
    assert build_request([5], [[6], [7, 8]], fallback=0).prefix == (0,)
    assert build_request([5], [[6], [7, 8]], bos=1).prefix == (1,)
    # too long: the oldest prompt tokens go (after the BOS), counted
    long = build_request(list(range(10, 30)), [[*range(10, 30), 5, 6]], bos=1, max_positions=8)
    assert long.prefix == (1, 25, 26, 27, 28, 29) and long.truncated == 15


def test_score_methods() -> None:
    scores = ChoiceScores((-2.0, -3.0), (1, 3), prefix_logprob=-10.0, prefix_tokens=4)
    assert scores.scores("sum") == (-2.0, -3.0)
    assert scores.scores("mean") == (-2.0, -1.0)
    assert scores.scores("ppl") == pytest.approx((-12.0 / 5, -13.0 / 7))
