"""Batched generation with shared prefixes equals one prompt at a time, token for token.

Every comparison runs both sides in this process on this machine (floats differ across CPUs):
clue-core's batched loop (prompts of different lengths sharing an instruction, the prefix
computed once, the rows' own tokens left-padded after it) against transformers'
``model.generate(do_sample=False)`` one prompt at a time, and against the same loop at batch
size 1; on a tiny Llama (full attention) and a tiny Gemma 3 (sliding-window layers, whose
window the generation outgrows).
"""

from __future__ import annotations

import random

import pytest
import torch

from clue_models_llm import generation, tiny
from clue_models_llm.chunked_head import Head
from clue_models_llm.generation import Generator
from clue_models_llm.generation_batches import MIN_SHARED_TOKENS, batch_order, common_length

TEXT = "阅读下面的文章回答问题天地玄黄宇宙洪荒日月盈昃辰宿列张寒来暑往秋收冬藏闰余成岁律吕调阳。答案：\n"
INSTRUCTION = "阅读下面的文章，回答问题。\n"
QUESTIONS = ("天地玄黄", "宇宙洪荒日月盈昃辰宿列张", "寒来暑往秋收冬藏", "闰", "律吕调阳云腾致雨露结为霜",
             "金生丽水玉出昆冈", "剑号巨阙", "珠称夜光果珍李柰菜重芥姜海咸河淡")
NEW_TOKENS = 12


@pytest.fixture(scope="module")
def tokenizer():
    return tiny.build_tokenizer([TEXT + INSTRUCTION + "".join(QUESTIONS) + "，"])


@pytest.fixture(scope="module")
def llama(tokenizer):
    from transformers import LlamaForCausalLM

    config = tiny.tiny_config(len(tokenizer), {"tiny_hidden_size": 48, "tiny_num_layers": 2, "tiny_num_heads": 4,
                                               "tiny_intermediate_size": 96})
    config.initializer_range = 0.3  # weights large enough that answers differ from prompt to prompt
    torch.manual_seed(3)
    return LlamaForCausalLM(config).eval()


@pytest.fixture(scope="module")
def gemma(tokenizer):
    from transformers import Gemma3ForCausalLM, Gemma3TextConfig

    config = Gemma3TextConfig(vocab_size=len(tokenizer), hidden_size=48, intermediate_size=96, num_hidden_layers=2,
                              num_attention_heads=2, num_key_value_heads=1, head_dim=24, sliding_window=40,
                              layer_types=["sliding_attention", "full_attention"], max_position_embeddings=512,
                              pad_token_id=0, bos_token_id=2, eos_token_id=3, attn_implementation="sdpa",
                              initializer_range=0.05)  # answers that differ by prompt and change as they go
    torch.manual_seed(4)
    return Gemma3ForCausalLM(config).eval()


def prompts_of(tokenizer, instruction: str = INSTRUCTION) -> list[list[int]]:
    return [tokenizer(f"{instruction}问题：{q}\n答案：", add_special_tokens=False).input_ids for q in QUESTIONS]


def generator(model, tokenizer, batch_size: int, stops=(), max_new_tokens: int = NEW_TOKENS) -> Generator:
    return Generator(model, tokenizer, batch_size=batch_size, max_new_tokens=max_new_tokens, thinking_tokens=0,
                     stops=stops, temperature=0.0, eos_ids=[tokenizer.eos_token_id], pad_id=0, seed=0)


def one_at_a_time(model, tokenizer, prompt: list[int], new_tokens: int = NEW_TOKENS) -> str:
    """transformers' own greedy generation of one unpadded prompt, ending at EOS; the text without EOS."""
    with torch.inference_mode():
        out = model.generate(torch.tensor([prompt]), attention_mask=torch.ones((1, len(prompt)), dtype=torch.long),
                             do_sample=False, max_new_tokens=new_tokens, eos_token_id=tokenizer.eos_token_id,
                             pad_token_id=0)
    written = out[0, len(prompt):].tolist()
    return tokenizer.decode([t for t in written if t != tokenizer.eos_token_id])


class Passes:
    """Records every pass's input widths (the decoder's: the generator runs it without the head)."""

    def __init__(self, model) -> None:
        self.model = model
        self.calls: list[tuple[int, int]] = []

    def __enter__(self):
        def hook(module, args, kwargs):
            ids = kwargs.get("input_ids", args[0] if args else None)
            self.calls.append(tuple(ids.shape))

        self.handle = self.model.get_decoder().register_forward_pre_hook(hook, with_kwargs=True)
        return self

    def __exit__(self, *exc) -> None:
        self.handle.remove()


@pytest.mark.parametrize("family", ["llama", "gemma"])
def test_batched_with_shared_prefix_equals_generate_one_at_a_time(request, tokenizer, family) -> None:
    model = request.getfixturevalue(family)
    prompts = prompts_of(tokenizer)
    shared = common_length(prompts)
    assert shared >= MIN_SHARED_TOKENS and len({len(p) for p in prompts}) > 4  # a real prefix, varied suffixes
    made = generator(model, tokenizer, batch_size=3)  # outside Passes: its head probe is no pass
    with Passes(model) as passes:
        batched = made.generate(prompts)
    assert passes.calls[0] == (1, shared)  # the call's common prefix: one pass of one row, once
    assert sum(1 for shape in passes.calls if shape[0] == 1 and shape[1] >= shared) == 1
    for prompt, got in zip(prompts, batched):
        assert got.text == one_at_a_time(model, tokenizer, prompt), tokenizer.decode(prompt)
    assert {g.finish for g in batched} == ({"eos", "length"} if family == "llama" else {"length"})
    singly = generator(model, tokenizer, batch_size=1).generate(prompts)
    assert [g.text for g in singly] == [g.text for g in batched]


def test_sliding_window_outgrown_after_the_prompt(tokenizer, gemma) -> None:
    """Prompts near the window's edge and answers well past it: the rows' padding moved out of the window."""
    prompts = prompts_of(tokenizer)
    assert max(len(p) for p in prompts) <= gemma.config.sliding_window - 1
    assert max(len(p) for p in prompts) + 30 > 2 * gemma.config.sliding_window - 20
    batched = generator(gemma, tokenizer, batch_size=8, max_new_tokens=30).generate(prompts)
    for prompt, got in zip(prompts, batched):
        assert got.text == one_at_a_time(gemma, tokenizer, prompt, 30)


def test_prompts_longer_than_the_window_share_their_prefix_and_still_agree(tokenizer, gemma) -> None:
    """Prompts (and their common prefix) longer than the sliding window: the prefix is still computed once
    (before, such a batch shared nothing and computed every prompt in full), answers unchanged."""
    prompts = prompts_of(tokenizer, INSTRUCTION * 3)
    shared = common_length(prompts)
    assert shared > gemma.config.sliding_window
    made = generator(gemma, tokenizer, batch_size=4, max_new_tokens=20)  # outside Passes: its head probe is no pass
    with Passes(gemma) as passes:
        batched = made.generate(prompts)
    assert passes.calls[0] == (1, shared)
    prompt_passes = [shape for shape in passes.calls if shape[0] == 4 and shape[1] > 1]
    assert len(prompt_passes) == 2
    assert all(width <= max(len(p) for p in prompts) - shared for _, width in prompt_passes)
    for prompt, got in zip(prompts, batched):
        assert got.text == one_at_a_time(gemma, tokenizer, prompt, 20)


@pytest.mark.parametrize("family", ["llama", "gemma"])
def test_the_head_sees_only_each_rows_last_position(request, tokenizer, family, monkeypatch) -> None:
    """Logits of a prompt's every position would be a vocabulary-wide row each (1 MB for gemma's 262k):
    the head computes one row per token generated, and prefix passes run the decoder without it."""
    model = request.getfixturevalue(family)
    prompts, _ = passage_prompts(tokenizer)
    made = generator(model, tokenizer, batch_size=4)  # its head check's probe runs the model here
    assert made.head.direct
    module_calls: list[tuple[int, ...]] = []
    handle = model.lm_head.register_forward_hook(lambda module, args, out: module_calls.append(tuple(args[0].shape)))
    seen: list[tuple[int, ...]] = []
    few = Head.few
    monkeypatch.setattr(Head, "few", lambda self, hidden: (seen.append(tuple(hidden.shape)), few(self, hidden))[1])
    try:
        results = made.generate(prompts)
    finally:
        handle.remove()
    assert module_calls == []
    assert all(len(shape) == 2 and 1 <= shape[0] <= 4 for shape in seen)
    assert sum(shape[0] for shape in seen) == sum(result.tokens for result in results)


def test_few_rows_of_the_head_equal_the_models_own_logits(llama) -> None:
    """``Head.few`` (``W @ h.T``) gives the model's logits to the last bits; a head it cannot reorder
    (bf16 weights, a bias) is applied as the model applies it."""
    head = Head(llama)
    hidden = torch.randn(5, llama.config.hidden_size, generator=torch.Generator().manual_seed(0))
    expected = llama.lm_head(hidden)
    got = head.few(hidden)
    assert got.shape == expected.shape and got.is_contiguous()
    assert torch.allclose(got, expected, atol=1e-5, rtol=1e-5)
    assert torch.equal(got.argmax(-1), expected.argmax(-1))
    biased = torch.nn.Linear(llama.config.hidden_size, 7)
    head.linear = biased
    assert torch.equal(head.few(hidden), biased(hidden))


def test_a_head_placed_by_accelerate_is_called_as_a_module(llama) -> None:
    """accelerate's hooks move a call's inputs to the weights' device, or load offloaded weights, in the
    module's call: a head carrying one (``_hf_hook``) is called, never read as a bare matrix."""
    import copy

    linear = copy.deepcopy(llama.lm_head)
    calls = []
    linear._hf_hook = object()  # what accelerate's add_hook_to_module sets
    linear.register_forward_pre_hook(lambda module, args: calls.append(args[0].shape))
    head = Head(llama)
    head.linear = linear
    hidden = torch.randn(3, llama.config.hidden_size, generator=torch.Generator().manual_seed(1))
    assert torch.equal(head.few(hidden), linear(hidden)) and len(calls) == 2


ARTICLES = ("天地玄黄宇宙洪荒", "日月盈昃辰宿列张", "寒来暑往秋收冬藏")


def passage_prompts(tokenizer) -> tuple[list[list[int]], list[int]]:
    """Three questions about each of three passages, and three prompts of their own; the passages' prompts."""
    texts, grouped = [], []
    for a, article in enumerate(ARTICLES):
        for question in QUESTIONS[a:a + 3]:
            grouped.append(len(texts))
            texts.append(f"阅读文章回答。\n文章：{article}{article[:4]}\n问题：{question[:4]}\n答案：")
    texts[4:4] = [f"阅读文章回答。\n问题：{q[:12]}\n答案：" for q in QUESTIONS[5:8]]
    grouped = [i if i < 4 else i + 3 for i in grouped]
    return [tokenizer(t, add_special_tokens=False).input_ids for t in texts], grouped


@pytest.mark.parametrize("family", ["llama", "gemma"])
def test_questions_about_one_passage_share_it(request, tokenizer, family) -> None:
    model = request.getfixturevalue(family)
    prompts, grouped = passage_prompts(tokenizer)
    order = batch_order(prompts)
    places = [order.index(i) for i in grouped]
    assert all(max(places[k:k + 3]) - min(places[k:k + 3]) == 2 for k in (0, 3, 6))  # each passage's together
    made = generator(model, tokenizer, batch_size=len(prompts))  # outside Passes: its head probe is no pass
    with Passes(model) as passes:
        batched = made.generate(prompts)
    alone = [shape for shape in passes.calls if shape[0] == 1]
    assert len(alone) == 1 + 3  # the common instruction once, each passage once (sliding layers or not)
    # then one pass of the same number of tokens for every row: the widest row's own ones
    assert passes.calls[len(alone)][0] == len(prompts)
    assert passes.calls[len(alone)][1] < max(len(p) for p in prompts) - common_length(prompts)
    for prompt, got in zip(prompts, batched):
        assert got.text == one_at_a_time(model, tokenizer, prompt), tokenizer.decode(prompt)
    split = generator(model, tokenizer, batch_size=4).generate(prompts)  # passages cut across batches
    assert [g.text for g in split] == [g.text for g in batched]


@pytest.mark.parametrize("family", ["llama", "gemma"])
def test_passages_beginning_alike_each_computed_once(request, tokenizer, family) -> None:
    """Two passages open with the same words (as a corpus's often do), a third does not: a row starts from
    its own passage, not from the opening it shares with another passage's rows (before, those rows were
    one group sharing the opening, and each computed its passage in the batch's pass)."""
    model = request.getfixturevalue(family)
    opening = "珠称夜光果珍李柰菜重芥姜"
    texts = [f"阅读文章回答。\n文章：{opening if a < 2 else ''}{article}{article}\n问题：{question[:4]}\n答案："
             for a, article in enumerate(ARTICLES) for question in QUESTIONS[a:a + 3]]
    prompts = [tokenizer(t, add_special_tokens=False).input_ids for t in texts]
    passage = min(common_length(prompts[k:k + 3]) for k in (0, 3, 6))
    assert passage >= common_length(prompts) + len(opening) + MIN_SHARED_TOKENS
    made = generator(model, tokenizer, batch_size=len(prompts))  # outside Passes: its head probe is no pass
    with Passes(model) as passes:
        batched = made.generate(prompts)
    assert [shape[0] for shape in passes.calls[:4]] == [1, 1, 1, 1]  # the instruction, then each passage
    assert passes.calls[4][0] == len(prompts) and passes.calls[4][1] <= max(len(p) for p in prompts) - passage
    for prompt, got in zip(prompts, batched):
        assert got.text == one_at_a_time(model, tokenizer, prompt), tokenizer.decode(prompt)


def test_stop_strings_and_max_tokens_batched_as_one_at_a_time(tokenizer, llama) -> None:
    prompts = prompts_of(tokenizer)
    one = generator(llama, tokenizer, batch_size=1, max_new_tokens=NEW_TOKENS).generate(prompts)
    # stop at a character some answers write and others do not
    written = [set(g.text) for g in one]
    stop = next(c for c in sorted(set().union(*written)) if 1 < sum(c in w for w in written) < len(written))
    singly = generator(llama, tokenizer, batch_size=1, stops=(stop,), max_new_tokens=9).generate(prompts)
    batched = generator(llama, tokenizer, batch_size=8, stops=(stop,), max_new_tokens=9).generate(prompts)
    assert [(g.text, g.tokens, g.finish) for g in batched] == [(g.text, g.tokens, g.finish) for g in singly]
    assert {g.finish for g in batched} >= {"stop", "length"}
    assert all(g.text.endswith(stop) for g in batched if g.finish == "stop")


@pytest.mark.parametrize("family", ["llama", "gemma"])
def test_prompts_join_the_batch_as_its_rows_finish(request, tokenizer, family, monkeypatch) -> None:
    """Once half a batch's rows have finished, waiting prompts join it (their cache padded into the
    batch's columns, sliding layers too), each still answered as one at a time would: the answers of
    ``batch_size=1`` to the token and the finish."""
    model = request.getfixturevalue(family)
    prompts = prompts_of(tokenizer) + passage_prompts(tokenizer)[0]
    one = generator(model, tokenizer, batch_size=1).generate(prompts)
    written = [set(g.text) for g in one]
    stop = max(sorted(set().union(*written)), key=lambda c: min(sum(c in w for w in written),
                                                                sum(c not in w for w in written)))
    singly = generator(model, tokenizer, batch_size=1, stops=(stop,)).generate(prompts)
    assert len({g.tokens for g in singly}) > 2  # rows finish at different steps
    merges: list[tuple[int, int]] = []
    merged = generation._merged
    monkeypatch.setattr(generation, "_merged", lambda old, new, empty: (
        merges.append((len(old.members), len(new.members))), merged(old, new, empty))[1])
    reported: list[int] = []
    batched = generator(model, tokenizer, batch_size=4, stops=(stop,)).generate(
        prompts, done=lambda finished, _: reported.extend(finished))
    assert merges and all(old <= 2 and old + new <= 4 for old, new in merges)
    assert [(g.text, g.tokens, g.finish) for g in batched] == [(g.text, g.tokens, g.finish) for g in singly]
    assert sorted(reported) == list(range(len(prompts)))


def test_answers_come_back_in_request_order_whatever_the_order(tokenizer, llama) -> None:
    prompts = prompts_of(tokenizer)
    reference = [g.text for g in generator(llama, tokenizer, batch_size=3).generate(prompts)]
    shuffled = list(range(len(prompts)))
    random.Random(7).shuffle(shuffled)
    reported: list[int] = []
    got = generator(llama, tokenizer, batch_size=3).generate([prompts[i] for i in shuffled],
                                                             done=lambda batch, _: reported.extend(batch))
    assert [g.text for g in got] == [reference[i] for i in shuffled]
    assert sorted(reported) == list(range(len(prompts)))  # every request reported once, batch by batch


def test_no_common_prefix_is_plain_left_padding(tokenizer, llama) -> None:
    prompts = [tokenizer(q, add_special_tokens=False).input_ids for q in QUESTIONS]
    assert common_length(prompts) < MIN_SHARED_TOKENS
    made = generator(llama, tokenizer, batch_size=4)  # outside Passes: its head probe is no pass
    with Passes(llama) as passes:
        batched = made.generate(prompts)
    assert [shape[0] for shape in passes.calls if shape[1] > 1] == [4, 4]  # one prompt pass per batch
    for prompt, got in zip(prompts, batched):
        assert got.text == one_at_a_time(llama, tokenizer, prompt)


def test_common_length_leaves_every_prompt_its_last_token() -> None:
    assert common_length([[1, 2, 3], [1, 2, 3]]) == 2
    assert common_length([[1, 2, 3, 4], [1, 2, 5]]) == 2
    assert common_length([[1], [1, 2]]) == 0
    assert common_length([]) == 0


def test_cmrc2018_predictions_unchanged_by_the_batch_size(run_cli, tmp_path, monkeypatch) -> None:
    """End to end: llm-tiny on the CMRC2018 sample, eval_batch_size 1 against 8 (result cache off)."""
    import json

    from clue_models_llm import generation_batches

    shared: list[int] = []
    joined = generation_batches.PrefixCache.joined

    def counted(self, prompts, lengths):
        shared.append(len(prompts))
        return joined(self, prompts, lengths)

    monkeypatch.setattr(generation_batches.PrefixCache, "joined", counted)
    texts = {}
    for size in (1, 8):
        out = tmp_path / f"batch{size}"
        result = run_cli("run", "cmrc2018", "--model", "llm-tiny", "--sample", "-o", out, "--set",
                         "max_new_tokens=16", "--set", f"eval_batch_size={size}", "--set", "result_cache=false")
        assert result.exit_code == 0, result.output
        lines = (out / "cmrc2018" / "predictions" / "dev.jsonl").read_text(encoding="utf-8").splitlines()
        texts[size] = [(r["id"], r["prediction"], r["raw"]["generation"]) for r in map(json.loads, lines)]
    assert len(texts[1]) > 1 and texts[1] == texts[8]
    assert 1 in shared and max(shared) > 1  # both runs computed the task's instruction once and shared it
