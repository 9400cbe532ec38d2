"""Whole-word masking: jieba's words become token groups, chosen words are masked together,
and the 15% budget and the 80/10/10 rule hold over many draws."""

from __future__ import annotations

import numpy as np
import pytest

from clue_models_hf.wwm import IGNORE, WordEncoder, mask_sequence, word_ids

MASK = 4


def words_of(continues: np.ndarray) -> list[list[int]]:
    groups: list[list[int]] = []
    for position, flag in enumerate(continues):
        if flag:
            groups[-1].append(position)
        else:
            groups.append([position])
    return groups


@pytest.fixture(scope="module")
def tokenizer():
    from clue_models_hf import tiny

    return tiny.build_tokenizer(["我们在北京大学学习自然语言处理，今天天气很好。hello world 2020年"])


def test_tokens_are_grouped_into_jieba_words(tokenizer) -> None:
    import jieba

    sentence = "我们在北京大学学习自然语言处理，今天天气很好。"
    ids, continues = WordEncoder(tokenizer).encode([sentence])
    assert len(ids) == len(sentence)  # one token per character
    groups = ["".join(sentence[i] for i in group) for group in words_of(continues)]
    assert groups == jieba.lcut(sentence)
    assert "北京大学" in groups


def test_latin_words_and_numbers_stay_whole_and_sentences_start_words(tokenizer) -> None:
    ids, continues = WordEncoder(tokenizer).encode(["hello world", "2020年"])
    tokens = tokenizer.convert_ids_to_tokens(ids.tolist())
    assert tokens[:5] == ["h", "##e", "##l", "##l", "##o"]
    assert continues.tolist() == [False, True, True, True, True, False, True, True, True, True,
                                  False, True, True, True, False]
    plain_ids, plain = WordEncoder(tokenizer, whole_words=False).encode(["hello world", "2020年"])
    assert plain_ids.tolist() == ids.tolist() and not plain.any()  # token-level masking: every token a word


def sequence(rng: np.random.Generator, words: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """[CLS] + random words of 1-4 tokens, with a [SEP] in the middle and at the end."""
    sizes = rng.integers(1, 5, words)
    continues = np.concatenate([[False] + [True] * (int(n) - 1) for n in sizes])
    ids = rng.integers(10, 5000, len(continues))
    middle = len(ids) // 2
    ids = np.concatenate(([2], ids[:middle], [3], ids[middle:], [3]))
    continues = np.concatenate(([False], continues[:middle], [False], continues[middle:], [False]))
    special = np.isin(ids, [2, 3])
    return ids, continues, special


def test_chosen_words_are_masked_whole_and_specials_never() -> None:
    rng = np.random.default_rng(0)
    vocab = np.arange(10, 5000)
    for _ in range(300):
        ids, continues, special = sequence(rng, 40)
        inputs, labels = mask_sequence(ids, continues, special, rng, MASK, vocab)
        assert (labels[special] == IGNORE).all() and (inputs[special] == ids[special]).all()
        words = word_ids(continues, special)
        for word in range(words.max() + 1):
            at = words == word
            chosen = labels[at] != IGNORE
            assert chosen.all() or not chosen.any()  # all tokens of a word, or none
            if chosen.all():
                assert (labels[at] == ids[at]).all()
                masked = inputs[at] == MASK
                assert masked.all() or not masked.any()  # the 80% branch takes the whole word


def test_a_sep_inside_a_run_of_continuations_still_splits_words() -> None:
    continues = np.array([False, True, True, True, True])
    special = np.array([False, False, True, False, False])
    assert word_ids(continues, special).tolist() == [0, 0, -1, 1, 1]


def test_budget_and_80_10_10_proportions_over_many_draws() -> None:
    rng = np.random.default_rng(1)
    vocab = np.arange(10, 30000)
    real = labelled = 0
    fates = {"mask": 0, "random": 0, "kept": 0}
    for _ in range(3000):
        ids, continues, special = sequence(rng, 60)
        inputs, labels = mask_sequence(ids, continues, special, rng, MASK, vocab, probability=0.15)
        real += int((~special).sum())
        labelled += int((labels != IGNORE).sum())
        words = word_ids(continues, special)
        for word in np.unique(words[(labels != IGNORE)]):
            at = words == word
            if (inputs[at] == MASK).all():
                fates["mask"] += 1
            elif (inputs[at] == ids[at]).all():
                fates["kept"] += 1
            else:
                fates["random"] += 1
    share = labelled / real
    assert 0.14 <= share <= 0.15  # never above the budget; words of up to 4 tokens leave little unfilled
    chosen = sum(fates.values())
    assert abs(fates["mask"] / chosen - 0.8) < 0.015
    assert abs(fates["random"] / chosen - 0.1) < 0.012
    assert abs(fates["kept"] / chosen - 0.1) < 0.012


def test_the_collator_masks_a_sequence_the_same_whatever_its_batch(tokenizer) -> None:
    from clue_models_hf.mlm import MaskingCollator

    rng = np.random.default_rng(2)
    items = []
    for index in range(6):
        ids, continues, _ = sequence(rng, 20)
        ids = np.where(np.isin(ids, [2, 3]), ids, ids % (len(tokenizer) - 10) + 5)
        items.append({"ids": ids, "continues": continues, "index": index})
    collate = MaskingCollator(tokenizer, seed=3, probability=0.15)
    together = collate(items)
    alone = collate([items[4]])
    width = len(items[4]["ids"])
    assert (together["input_ids"][4, :width] == alone["input_ids"][0]).all()
    assert (together["labels"][4, :width] == alone["labels"][0]).all()
    collate.use_epoch(1)
    later = collate(items)
    assert not (later["labels"] == together["labels"]).all()  # a new epoch draws new masks
