"""CMRC2018 and DRCD readers: samples, real records, placeholders, offsets, bad input."""

from __future__ import annotations

import json
import shutil

import pytest

from clue_core.errors import InputError
from clue_tasks_mrc.squad import read_cmrc2018, read_drcd

from .conftest import SAMPLES


def test_cmrc_sample_splits():
    train = read_cmrc2018(SAMPLES / "cmrc2018", "train")
    dev = read_cmrc2018(SAMPLES / "cmrc2018", "dev")
    trial = read_cmrc2018(SAMPLES / "cmrc2018", "trial")
    test = read_cmrc2018(SAMPLES / "cmrc2018", "test")
    assert len(train) >= 6 and len(trial) >= 2
    assert all(len(e.answers) == 3 for e in dev.examples)
    for example in [*train.examples, *dev.examples, *trial.examples]:
        for text, start in example.answers:
            assert example.context[start : start + len(text)] == text
    assert all(e.answers is None for e in test.examples)
    assert test.examples[0].id == "TEST_0_QUERY_0"
    assert dev.files and dev.files[0].endswith("dev.json")


def test_drcd_stays_traditional():
    dev = read_drcd(SAMPLES / "drcd", "dev")
    example = dev.examples[0]
    assert "書店" in example.context and "书店" not in example.context
    assert example.answers[0][0] in example.context
    assert all(e.answers is None for e in read_drcd(SAMPLES / "drcd", "test").examples)


def test_real_records(real_records):
    cmrc = real_records("cmrc2018")
    dev = read_cmrc2018(cmrc, "dev")
    assert dev.examples[0].id == "DEV_0_QUERY_0"
    assert dev.examples[0].answers[0] == ("光荣和ω-force", 11)
    assert [e.answers for e in read_cmrc2018(cmrc, "test").examples] == [None] * 5
    assert len(read_cmrc2018(cmrc, "trial")) == 4
    drcd = real_records("drcd")
    assert read_drcd(drcd, "dev").examples[-1].answers == (("蘇達爾摩", 315), ("《蘇達爾摩》", 314))
    assert read_drcd(drcd, "test").examples[0].id == "6171-11-1"


def _write(tmp_path, document, name="dev.json"):
    (tmp_path / name).write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")
    return tmp_path


def _one_question(answers, qid="Q1", context="青石镇始建于1736年"):
    return {"data": [{"paragraphs": [{"context": context, "qas": [{"id": qid, "question": "?", "answers": answers}]}]}]}


def test_offset_mismatch_names_the_question(tmp_path):
    _write(tmp_path, _one_question([{"text": "1736年", "answer_start": 1}]))  # the text sits at 6: 5 away
    with pytest.raises(InputError) as caught:
        read_cmrc2018(tmp_path, "dev")
    assert caught.value.record == "Q1" and caught.value.field == "answers[0].answer_start"
    assert "dev.json" in str(caught.value) and "1736年" in str(caught.value)


@pytest.mark.parametrize("start", [3, 5, 7, 9])
def test_an_offset_at_most_three_characters_off_is_moved_and_noted(tmp_path, start):
    _write(tmp_path, _one_question([{"text": "1736年", "answer_start": start}]))
    split = read_cmrc2018(tmp_path, "dev")
    assert split.examples[0].answers == (("1736年", 6),)
    assert len(split.notes) == 1 and "moved 1 answer offset(s)" in split.notes[0] and "Q1" in split.notes[0]


def test_placeholder_answers_rejected_outside_test(tmp_path):
    _write(tmp_path, _one_question([{"text": "FAKE_ANSWER_1", "answer_start": -1}]))
    with pytest.raises(InputError, match="placeholder"):
        read_cmrc2018(tmp_path, "dev")
    shutil.copy(tmp_path / "dev.json", tmp_path / "test.json")
    assert read_cmrc2018(tmp_path, "test").examples[0].answers is None


@pytest.mark.parametrize(
    ("document", "field"),
    [
        ({"data": [{"paragraphs": [{"qas": []}]}]}, "context"),
        (_one_question([{"text": "1736年"}]), "answers[0].answer_start"),
        (_one_question([{"text": 5, "answer_start": 0}]), "answers[0].text"),
        (_one_question([]), "answers"),
        ({"data": [{"paragraphs": [{"context": "x", "qas": [{"question": "?", "answers": []}]}]}]}, "id"),
    ],
)
def test_bad_records_name_the_field(tmp_path, document, field):
    _write(tmp_path, document)
    with pytest.raises(InputError) as caught:
        read_cmrc2018(tmp_path, "dev")
    assert caught.value.field == field


def test_malformed_json_names_the_line(tmp_path):
    (tmp_path / "dev.json").write_text('{"data": [\n{"paragraphs": ]}', encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_cmrc2018(tmp_path, "dev")
    assert caught.value.line == 2


def test_duplicate_question_id(tmp_path):
    document = _one_question([{"text": "1736年", "answer_start": 6}])
    qas = document["data"][0]["paragraphs"][0]["qas"]
    qas.append(dict(qas[0]))
    _write(tmp_path, document)
    with pytest.raises(InputError, match="duplicate"):
        read_cmrc2018(tmp_path, "dev")
