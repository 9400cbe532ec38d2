"""Tokenizing, windowing and batching, checked against the original texts."""

from __future__ import annotations

import pytest
import torch

from clue_core.plugin import ClassificationExample, ClueError, MultipleChoiceExample, SpanExample
from clue_models_hf import encoding, tiny
from clue_models_hf.batching import Collator, LengthGroupedBatches
from clue_models_hf.heads import forward

# DRCD-style Traditional Chinese, with Latin letters, digits and full-width punctuation
CONTEXT = ("臺灣高速鐵路，簡稱台灣高鐵，是臺灣一條高速鐵路系統，全長349.5公里。"
           "列車採用日本新幹線700T型，最高營運速度每小時300公里。Taiwan High Speed Rail於2007年通車，"
           "連接臺北市與高雄市，沿途設有十二個車站。")
ANSWER = "日本新幹線700T型"


@pytest.fixture(scope="module")
def tokenizer():
    return tiny.build_tokenizer([CONTEXT, "列車採用哪種型號？", "甲乙丙"])


def test_vocabulary_is_deterministic_and_frequency_ordered() -> None:
    vocab = tiny.build_vocab(["bba 乙乙乙甲", "甲 a。"])
    assert list(vocab)[:5] == list(tiny.SPECIAL_TOKENS)
    assert vocab == tiny.build_vocab(["bba 乙乙乙甲", "甲 a。"])
    # by falling count (乙 3; a, b, 甲 2 each), then code point; "##" pieces follow their character
    assert vocab["乙"] < vocab["a"] < vocab["##a"] < vocab["b"] < vocab["甲"] < vocab["。"]
    assert "##a" in vocab and "##b" in vocab and "##乙" not in vocab and "##。" not in vocab


def test_span_windows_map_back_to_the_original_characters(tokenizer) -> None:
    start = CONTEXT.index(ANSWER)
    example = SpanExample("d1", CONTEXT, "列車採用哪種型號？", ((ANSWER, start),))
    features = encoding.encode_spans(tokenizer, [example], max_length=40, doc_stride=10, max_query_length=16,
                                     with_labels=True)
    assert len(features) > 3  # the context needs several windows
    covered = set()
    labelled = 0
    for item, offsets, inside in zip(features.items, features.offsets, features.context_mask):
        tokens = [t for t, flag in enumerate(inside) if flag]
        assert tokens == list(range(tokens[0], tokens[-1] + 1))  # one contiguous context run per window
        for t in tokens:
            covered.update(range(*offsets[t]))
        if item["start_position"]:
            labelled += 1
            text = CONTEXT[offsets[item["start_position"]][0]:offsets[item["end_position"]][1]]
            assert text == ANSWER
    assert labelled >= 1
    assert covered == {i for i, ch in enumerate(CONTEXT) if not ch.isspace()}


def test_answers_without_a_usable_offset_are_skipped_for_training(tokenizer) -> None:
    start = CONTEXT.index(ANSWER)
    question = "列車採用哪種型號？"
    examples = [
        # CMRC2018 dev style: a gold text that is not in the context has no offset (start None)
        SpanExample("none", CONTEXT, question, (("新幹線N700S", None),)),
        # the unusable answer is skipped, the next one is trained on
        SpanExample("second", CONTEXT, question, (("新幹線N700S", None), (ANSWER, start))),
        # an offset that is off is relocated to the text's occurrence
        SpanExample("moved", CONTEXT, question, ((ANSWER, start + 3),)),
    ]
    located = (start, start + len(ANSWER))
    assert [encoding.answer_span(e) for e in examples] == [None, located, located]
    features = encoding.encode_spans(tokenizer, examples, max_length=40, doc_stride=10, max_query_length=16,
                                     with_labels=True)
    assert set(features.example_index) == {1, 2}  # indices into the examples given
    assert features.notes == ["1 of 3 examples have no answer located in their context and were not used "
                              "for training"]
    labelled = 0
    for item, offsets in zip(features.items, features.offsets):
        if item["start_position"]:
            labelled += 1
            assert CONTEXT[offsets[item["start_position"]][0]:offsets[item["end_position"]][1]] == ANSWER
    assert labelled >= 2  # both usable examples point at their answer in some window
    # predicting needs no answers: every example gets its windows
    assert set(encoding.encode_spans(tokenizer, examples, max_length=40, doc_stride=10, max_query_length=16,
                                     with_labels=False).example_index) == {0, 1, 2}
    assert not encoding.encode_spans(tokenizer, examples[:1], max_length=40, doc_stride=10, max_query_length=16,
                                     with_labels=True).items


def test_long_questions_are_cut_to_max_query_length(tokenizer) -> None:
    example = SpanExample("d2", CONTEXT[:30], "臺灣" * 20)
    features = encoding.encode_spans(tokenizer, [example], max_length=64, doc_stride=8, max_query_length=5,
                                     with_labels=False)
    question_tokens = [t for t, flag in enumerate(features.context_mask[0]) if not flag]
    assert len(question_tokens) == 5 + 3  # five question tokens, [CLS] and two [SEP]


def test_a_stride_that_leaves_no_room_is_one_clear_error(tokenizer) -> None:
    example = SpanExample("d3", CONTEXT, "問")
    with pytest.raises(ClueError, match="doc_stride"):
        encoding.encode_spans(tokenizer, [example], max_length=64, doc_stride=60, max_query_length=16,
                              with_labels=False)


def test_unknown_label_names_the_example(tokenizer) -> None:
    examples = [ClassificationExample("x7", "甲乙", None, "maybe")]
    with pytest.raises(ClueError, match=r"'x7'.*'maybe'"):
        encoding.encode_classification(tokenizer, examples, {"yes": 0, "no": 1}, 32, with_labels=True)


def test_single_texts_and_pairs_keep_their_order(tokenizer) -> None:
    examples = [ClassificationExample(0, "甲", "乙"), ClassificationExample(1, "丙"),
                ClassificationExample(2, "乙", "甲")]
    features = encoding.encode_classification(tokenizer, examples, {}, 32, with_labels=False)
    sep = tokenizer.sep_token_id
    assert [item["input_ids"].count(sep) for item in features.items] == [2, 1, 2]
    assert features.items[0]["input_ids"][1] == tokenizer.convert_tokens_to_ids("甲")


class FixedChoiceModel(torch.nn.Module):
    """Stands in for AutoModelForMultipleChoice: scores each row by its first token id, very negatively."""

    def forward(self, input_ids, attention_mask=None, token_type_ids=None):
        class Out:
            logits = -1e30 + input_ids[..., 1].float()
        return Out()


def test_padding_choices_never_win_and_take_no_probability(tokenizer) -> None:
    examples = [MultipleChoiceExample(0, "甲", "", ("乙", "丙"), 1),
                MultipleChoiceExample(1, "甲", "", ("乙", "丙", "甲", "乙"), 3)]
    features = encoding.encode_choices(tokenizer, examples, 16, with_labels=True)
    batch = Collator("multiple_choice", tokenizer.pad_token_id)(
        [dict(item, index=i) for i, item in enumerate(features.items)])
    assert batch["input_ids"].shape[0] == 6  # only real choices reach the encoder
    assert batch["choice_mask"].tolist() == [[True, True, False, False], [True, True, True, True]]
    loss, (grid,) = forward(FixedChoiceModel(), batch, "multiple_choice", with_loss=True)
    assert grid.argmax(dim=1)[0] < 2
    assert torch.softmax(grid, dim=1)[0, 2:].sum() == 0
    assert torch.isfinite(loss)


def test_length_grouped_batches_cover_everything_once_and_are_reproducible() -> None:
    lengths = [(i * 37) % 101 + 1 for i in range(203)]
    sampler = LengthGroupedBatches(lengths, batch_size=8, seed=3, group_factor=4)
    first = sampler.batches()
    assert sorted(i for b in first for i in b) == list(range(203))
    assert all(len(b) == 8 for b in first[:-1]) and len(first[-1]) == 203 % 8
    assert first == LengthGroupedBatches(lengths, 8, 3, 4).batches()
    sampler.use_epoch(1)
    assert sampler.batches() != first
    spread = sum(max(lengths[i] for i in b) - min(lengths[i] for i in b) for b in first) / len(first)
    assert spread < 30  # random batches of 8 from 1..101 spread about 70
