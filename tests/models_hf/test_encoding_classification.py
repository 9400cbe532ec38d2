"""encode_classification: what the items hold, in which order, and when it refuses."""

from __future__ import annotations

import pytest

from clue_core.errors import ClueError
from clue_core.examples import ClassificationExample
from clue_models_hf import encoding, tiny

TEXTS = ["甲乙丙丁", "戊己庚辛壬癸", "子丑寅卯辰巳午未"]


@pytest.fixture(scope="module")
def tokenizer():
    return tiny.build_tokenizer(TEXTS)


def test_items_match_the_tokenizer_on_each_example(tokenizer) -> None:
    examples = [ClassificationExample(0, TEXTS[0], TEXTS[1], "b"), ClassificationExample(1, TEXTS[2], None, "a"),
                ClassificationExample(2, TEXTS[1] * 3, TEXTS[2] * 3, "a"),
                ClassificationExample(3, TEXTS[0], None, "b")]
    features = encoding.encode_classification(tokenizer, examples, {"a": 0, "b": 1}, 16, with_labels=True)
    for example, item, length in zip(examples, features.items, features.lengths):
        one = tokenizer(example.text, example.text_pair, truncation=True, max_length=16)
        assert item == {"input_ids": one["input_ids"], "token_type_ids": one["token_type_ids"],
                        "label": {"a": 0, "b": 1}[example.label]}
        assert length == len(one["input_ids"]) <= 16
    assert features.example_index == [0, 1, 2, 3]
    assert "attention_mask" not in features.items[0]  # the collator derives it from the lengths


def test_without_labels_and_without_token_types(tokenizer, monkeypatch) -> None:
    examples = [ClassificationExample(0, TEXTS[0], TEXTS[1], "not-a-label")]
    features = encoding.encode_classification(tokenizer, examples, {}, 16, with_labels=False)
    assert set(features.items[0]) == {"input_ids", "token_type_ids"}
    monkeypatch.setattr(tokenizer, "model_input_names", ["input_ids", "attention_mask"])  # RoBERTa-like
    features = encoding.encode_classification(tokenizer, examples, {}, 16, with_labels=False)
    assert set(features.items[0]) == {"input_ids"}


def test_an_unknown_label_stops_before_tokenizing() -> None:
    class NoCalls:
        model_input_names = ("input_ids",)

        def __call__(self, *args, **kwargs):
            raise AssertionError("tokenized although a label is unknown")

    examples = [ClassificationExample(0, "x", None, "a"), ClassificationExample("q9", "y", None, "maybe")]
    with pytest.raises(ClueError, match=r"example 'q9': label 'maybe' is not one of the model's labels \(a, b\)"):
        encoding.encode_classification(NoCalls(), examples, {"a": 0, "b": 1}, 16, with_labels=True)


def test_no_examples(tokenizer) -> None:
    features = encoding.encode_classification(tokenizer, [], {"a": 0}, 16, with_labels=True)
    assert len(features) == 0 and features.lengths == []
