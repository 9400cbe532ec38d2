"""Batched greedy generation, stop strings, end of sequence and the thinking budget."""

from __future__ import annotations

import pytest
import torch

from clue_models_llm import generation, tiny
from clue_models_llm.generation import Generator

ALPHABET = "<think>/想答案是A相同问题\n。一二三四五六七八九十"


class Scripted(torch.nn.Module):
    """A fake causal LM that writes ``script`` after prompts of one length, whatever it is fed."""

    def __init__(self, tokenizer, script: str, prompt_length: int) -> None:
        super().__init__()
        self.embed = torch.nn.Embedding(len(tokenizer), 1)
        self.vocab = len(tokenizer)
        self.script = tokenizer(script, add_special_tokens=False).input_ids
        self.prompt_length = prompt_length

    def get_input_embeddings(self):
        return self.embed

    def forward(self, input_ids, attention_mask=None, position_ids=None, cache=None, use_cache=True,
                logits_to_keep=0):
        step = position_ids[:, -1] - (self.prompt_length - 1)
        logits = torch.full((input_ids.shape[0], 1, self.vocab), -1e4)
        for row, k in enumerate(step.tolist()):
            logits[row, 0, self.script[min(k, len(self.script) - 1)]] = 0.0
        return type("Out", (), {"logits": logits})()


class NoCache:
    def batch_select_indices(self, indices):
        pass


@pytest.fixture
def scripted(monkeypatch):
    monkeypatch.setattr(generation, "new_cache", lambda model: NoCache())
    tokenizer = tiny.build_tokenizer([ALPHABET])

    def make(script, **settings):
        model = Scripted(tokenizer, script, prompt_length=3)
        options = {"batch_size": 4, "max_new_tokens": 8, "thinking_tokens": 5, "stops": ("\n",),
                   "temperature": 0.0, "eos_ids": [tokenizer.eos_token_id], "pad_id": 0, "seed": 1, **settings}
        prompt = tokenizer("问题：", add_special_tokens=False).input_ids
        return Generator(model, tokenizer, **options).generate([prompt] * 3)

    return make


def test_stop_string_ends_the_answer(scripted) -> None:
    out = scripted("相同\n问题")
    assert {g.text for g in out} == {"相同\n"} and out[0].finish == "stop"


def test_max_new_tokens_ends_the_answer(scripted) -> None:
    out = scripted("一二三四五六七八九十")
    assert out[0].text == "一二三四五六七八" and out[0].finish == "length"


def test_thinking_budget_closes_the_block_then_the_answer_gets_its_own_budget(scripted) -> None:
    out = scripted("<think>" + "想" * 40, max_new_tokens=3, thinking_tokens=12)
    thinking, _, answer = out[0].text.partition("</think>")
    assert thinking == "<think>" + "想" * 11 + "\n"  # 12 tokens: the tag's last piece and 11 thoughts
    assert answer == "\n\n想" and out[0].finish == "length"
    # a finished thought keeps the rest of the budget unused
    done = scripted("<think>想</think>答案是A\n", thinking_tokens=100, max_new_tokens=20)
    assert done[0].text == "<think>想</think>答案是A\n" and done[0].finish == "stop"
    assert done[0].thinking_tokens == 1 + 1 + len("</think>")  # the opening tag's last piece, 想, the closing tag


def test_end_of_sequence_is_not_part_of_the_text(scripted) -> None:
    out = scripted("相同</s>", stops=())
    assert out[0].text == "相同" and out[0].finish == "eos"


def test_batched_greedy_equals_one_prompt_at_a_time_without_cache() -> None:
    texts = ["天地玄黄宇宙洪荒日月盈昃辰宿列张寒来暑往秋收冬藏" * 2]
    model, tokenizer = tiny.build_model(texts, {"tiny_hidden_size": 32, "tiny_num_layers": 2, "tiny_num_heads": 2,
                                                "tiny_intermediate_size": 64}, seed=5)
    texts = ("天地", "宇宙洪荒日月", "寒来暑往秋收冬藏闰", "列")
    prompts = [tokenizer(t, add_special_tokens=False).input_ids for t in texts]
    generator = Generator(model, tokenizer, batch_size=3, max_new_tokens=6, thinking_tokens=0, stops=(),
                          temperature=0.0, eos_ids=[tokenizer.eos_token_id], pad_id=0, seed=0)
    batched = generator.generate(prompts)
    for prompt, got in zip(prompts, batched):
        ids = list(prompt)
        with torch.no_grad():
            for _ in range(6):
                ids.append(int(model(input_ids=torch.tensor([ids])).logits[0, -1].argmax()))
        assert tokenizer.decode(ids[len(prompt):]) == got.text


def test_sampling_is_seeded_per_prompt() -> None:
    model, tokenizer = tiny.build_model([ALPHABET], {"tiny_hidden_size": 16, "tiny_num_layers": 1,
                                                     "tiny_num_heads": 2, "tiny_intermediate_size": 32}, seed=0)
    prompts = [tokenizer(t, add_special_tokens=False).input_ids for t in ("问题", "答案是")]

    def sample(seed, batch_size):
        return [g.text for g in Generator(model, tokenizer, batch_size=batch_size, max_new_tokens=8,
                                          thinking_tokens=0, stops=(), temperature=1.0, eos_ids=[], pad_id=0,
                                          seed=seed).generate(prompts)]

    assert sample(1, 2) == sample(1, 1)  # the batch does not change what a prompt draws
    assert sample(1, 2) != sample(2, 2)
