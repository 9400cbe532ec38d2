"""The prediction path (length-sorted batches, the last layer for the first token only) against
a straightforward reference: every example on its own, unpadded, through the full model."""

from __future__ import annotations

import random

import pytest
import torch

from clue_core.plugin import ClassificationExample
from clue_models_hf.factory import create_tiny
from clue_models_hf.first_token import first_token_only

from .conftest import TINY, accuracy_scorer, run_context, sentence

pytestmark = pytest.mark.slow

#: two layers, so the first-token layer follows a full one; batches of 8 over mixed lengths
SETTINGS = dict(TINY, tiny_num_layers=2, epochs=3, eval_batch_size=8, max_length=32)


def mixed_lengths(count: int, seed: int) -> list[ClassificationExample]:
    """Texts of 1 to 60 characters (max_length 32 truncates the longer ones), long and short
    interleaved so length sorting reorders them; the marker decides the label."""
    rng = random.Random(seed)
    markers = {"103": "甲", "100": "乙", "116": "丙"}
    examples = []
    for i in range(count):
        label = ("103", "100", "116")[i % 3]
        n = rng.randint(40, 60) if i % 2 else rng.randint(0, 10)
        text = markers[label] + sentence(rng, n)
        examples.append(ClassificationExample(f"e{i}", text, None, label))
    return examples


@pytest.fixture(scope="module")
def learner(tmp_path_factory, classification_task):
    train, dev = mixed_lengths(60, 1), mixed_lengths(12, 2)
    model = create_tiny(None, classification_task, SETTINGS)
    model.fit(train, dev, run_context(classification_task, tmp_path_factory.mktemp("predict"),
                                      accuracy_scorer(dev)))
    return model


def reference(learner, examples) -> list[torch.Tensor]:
    """Class probabilities, one example at a time: no padding, no sorting, the model's full forward."""
    model = learner.model.eval()
    rows = []
    with torch.no_grad():
        for e in examples:
            encoded = learner.tokenizer(e.text, truncation=True, max_length=learner.max_length, return_tensors="pt")
            rows.append(torch.softmax(model(**encoded).logits[0].float(), -1))
    return rows


def test_predictions_match_the_reference_in_example_order(learner) -> None:
    examples = mixed_lengths(37, 3)  # 37: the last batch is short
    predictions = learner.predict(examples)
    assert [p.id for p in predictions] == [e.id for e in examples]
    expected = reference(learner, examples)
    for prediction, probabilities in zip(predictions, expected):
        assert torch.allclose(torch.tensor(prediction.scores), probabilities, atol=1e-4)
        assert prediction.value == learner.labels[int(probabilities.argmax())]
    lengths = [len(learner.tokenizer(e.text, truncation=True, max_length=32)["input_ids"]) for e in examples]
    assert min(lengths) < 12 and max(lengths) == 32  # batches really mixed lengths and truncation


def test_empty_input_predicts_nothing(learner) -> None:
    assert learner.predict([]) == []


def test_first_token_layer_agrees_with_the_full_layer_on_padded_batches(learner) -> None:
    model = learner.model.eval()
    encoded = learner.tokenizer([e.text for e in mixed_lengths(6, 4)], truncation=True, max_length=32,
                                padding=True, return_tensors="pt")
    assert not bool(encoded["attention_mask"].all())  # some rows are padded
    with torch.no_grad():
        full = model(**encoded).logits
        with first_token_only(model, "classification") as engaged:
            short = model(**encoded)
        assert engaged
        assert short.hidden_states is None and torch.allclose(short.logits, full, atol=1e-5)
        # the layer's own forward is back: the last hidden state has every position again
        assert model.base_model(**encoded).last_hidden_state.shape[1] == encoded["input_ids"].shape[1]


def test_first_token_layer_stays_out_of_training_and_other_heads(learner) -> None:
    model = learner.model
    model.train()
    try:
        with first_token_only(model, "classification") as engaged:
            assert not engaged
    finally:
        model.eval()
    with first_token_only(model, "span") as engaged:
        assert not engaged


@pytest.mark.parametrize("max_length", [4, 9, 32, 128])
def test_prefix_tokenization_equals_truncating_the_whole_text(max_length) -> None:
    """Long texts tokenized as prefixes give exactly the ids and token types of the full texts
    truncated: CJK, Latin words a prefix cuts in half, numbers, spaces, an over-long word
    (one [UNK]), combining accents, empty and whole short texts."""
    from clue_models_hf import tiny
    from clue_models_hf.encoding import tokenize_singles

    rng = random.Random(max_length)
    pieces = ["天地玄黄", "hello", "world ", " ", "  ", "123", "4567.89", "，", "!", "İstanbul", "ﬁx", "e\u0301",
              "x" * 120, "中文", "\u0301"]
    texts = ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 120))) for _ in range(400)] + ["", "a"]
    tokenizer = tiny.build_tokenizer([*texts[:100], "abcdefghijklmnopqrstuvwxyz"])
    expected = tokenizer(texts, truncation=True, max_length=max_length, return_attention_mask=False)
    ids, types = tokenize_singles(tokenizer, list(texts), max_length, True)
    assert ids == expected["input_ids"]
    assert types == expected["token_type_ids"]
    assert sum(len(t) > max_length * 2 for t in texts) > 100  # most texts took the prefix route
