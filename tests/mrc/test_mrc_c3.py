"""C3 reader and decode."""

from __future__ import annotations

import json

import pytest

from clue_core.errors import DataError, InputError
from clue_core.examples import MultipleChoiceExample, Prediction
from clue_core.reading import read_split
from clue_tasks_mrc import c3
from clue_tasks_mrc.hooks import C3

from .conftest import SAMPLES


def test_train_reads_d_then_m_with_labels():
    train = c3.read(C3, SAMPLES / "c3", "train")
    d_file = json.loads((SAMPLES / "c3" / "d-train.json").read_text(encoding="utf-8"))
    n_d = sum(len(document[1]) for document in d_file)
    assert [e.id for e in train.examples] == list(range(len(train)))
    assert train.examples[0].context.startswith("男：")  # dialogue first
    assert not train.examples[n_d].context.startswith(("男：", "女："))  # then the m- file
    for example in train.examples:
        assert 2 <= len(example.choices) <= 4
    assert train.examples[0].choices[train.examples[0].label] == "下午三点"
    assert {len(e.choices) for e in train.examples} >= {2, 3, 4}
    assert train.where[0] == f"{train.files[0]} (document 0 question 0)"
    assert train.where[n_d].startswith(f"{train.files[1]} (document 0 question 0")


def test_test_versions_keep_file_ids_and_long_choice_lists():
    test = c3.read(C3, SAMPLES / "c3", "test1.1")
    assert [e.id for e in test.examples] == [0, 1, 2]
    assert len(test.examples[2].choices) == 5
    assert test.notes and "5" not in test.notes[0] and "1 (all choices kept)" in test.notes[0]
    assert [e.id for e in c3.read(C3, SAMPLES / "c3", "test1.0").examples] == [1]
    assert test.where == tuple(f"{test.files[0]} (id {i})" for i in (0, 1, 2))


def test_real_records(real_records):
    folder = real_records("c3")
    train = c3.read(C3, folder, "train")
    assert train.examples[0].choices[train.examples[0].label] == "喜剧片"
    test = c3.read(C3, folder, "test1.1")
    assert test.examples[0].id == 508 and test.examples[0].label is None


def test_answer_not_among_choices(tmp_path):
    bad = [[["文"], [{"question": "?", "choice": ["甲", "乙"], "answer": "丙"}], "1-1"]]
    (tmp_path / "d-dev.json").write_text(json.dumps(bad, ensure_ascii=False), encoding="utf-8")
    (tmp_path / "m-dev.json").write_text("[]", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        c3.read(C3, tmp_path, "dev")
    assert caught.value.field == "answer" and "d-dev.json" in str(caught.value)


def test_test_question_without_id(tmp_path):
    (tmp_path / "test1.0.json").write_text(json.dumps([[["文"], [{"question": "?", "choice": ["甲", "乙"]}]]]))
    with pytest.raises(InputError) as caught:
        c3.read(C3, tmp_path, "test1.0")
    assert caught.value.field == "id" and caught.value.record == "document 0 question 0"


def test_decode_never_predicts_a_padding_choice():
    examples = [MultipleChoiceExample(id=7, context="", question="", choices=("甲", "乙"))]
    padded = Prediction(7, 3, scores=(0.1, 0.7, 0.0, 0.9))
    assert c3.decode(examples, [padded])[0].value == 1
    kept = Prediction(7, 0, scores=(0.1, 0.7, 0.0, 0.9))
    assert c3.decode(examples, [kept])[0].value == 0
    with pytest.raises(DataError, match="question 7"):
        c3.decode(examples, [Prediction(7, 2)])


def test_duplicate_test_ids_are_found_by_the_kernel(tmp_path):
    question = {"question": "?", "choice": ["甲", "乙"], "id": 4}
    (tmp_path / "test1.1.json").write_text(json.dumps([[["文"], [question, question]]]), encoding="utf-8")
    assert len(c3.read(C3, tmp_path, "test1.1")) == 2  # the reader no longer checks ids itself
    with pytest.raises(InputError, match="duplicate id 4") as caught:
        read_split(C3, tmp_path, "test1.1")
    assert str(caught.value).startswith(f"{tmp_path / 'test1.1.json'} (id 4): field 'id'")


def test_decode_lets_a_missing_answer_through_as_wrong_and_keeps_what_the_model_said():
    import dataclasses

    from clue_core.plugin import MultipleChoiceExample, Prediction
    from clue_tasks_mrc.c3 import decode

    examples = [MultipleChoiceExample("q1", "c", "q", ("a", "b", "c"), label=1),
                MultipleChoiceExample("q2", "c", "q", ("a", "b"), label=0)]
    unextracted = Prediction("q1", None, None, {"generated": "我不知道", "extracted": False})
    padded = Prediction("q2", 3, (0.1, 0.7, 0.2, 0.9), {"generated": "D"})
    decoded = decode(examples, [unextracted, padded])
    assert decoded[0] == unextracted  # no answer: scored as wrong, not replaced by a guess
    assert decoded[1] == dataclasses.replace(padded, value=1)  # best real choice, raw kept
