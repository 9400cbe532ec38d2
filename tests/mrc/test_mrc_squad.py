"""CMRC2018 and DRCD reader: samples, real records, placeholders, offsets, bad input."""

from __future__ import annotations

import json
import shutil

import pytest

from clue_core.errors import InputError
from clue_core.examples import Prediction
from clue_core.reading import read_split
from clue_tasks_mrc.cmrc_metric import compute
from clue_tasks_mrc.hooks import CMRC2018, DRCD
from clue_tasks_mrc.squad import read

from .conftest import SAMPLES


def read_cmrc(folder, split):
    return read(CMRC2018, folder, split)


def test_cmrc_sample_splits():
    train = read_cmrc(SAMPLES / "cmrc2018", "train")
    dev = read_cmrc(SAMPLES / "cmrc2018", "dev")
    trial = read_cmrc(SAMPLES / "cmrc2018", "trial")
    test = read_cmrc(SAMPLES / "cmrc2018", "test")
    assert len(train) >= 6 and len(trial) >= 2
    assert all(len(e.answers) == 3 for e in dev.examples)
    for example in [*train.examples, *dev.examples, *trial.examples]:
        for text, start in example.answers:
            assert example.context[start : start + len(text)] == text
    assert all(e.answers is None for e in test.examples)
    assert test.examples[0].id == "TEST_0_QUERY_0"
    assert dev.files and dev.files[0].endswith("dev.json")
    assert dev.where[0] == f"{dev.files[0]} (id DEV_0_QUERY_0)" and len(dev.where) == len(dev)
    assert not dev.notes


def test_drcd_stays_traditional():
    dev = read(DRCD, SAMPLES / "drcd", "dev")
    example = dev.examples[0]
    assert "書店" in example.context and "书店" not in example.context
    assert example.answers[0][0] in example.context
    assert all(e.answers is None for e in read(DRCD, SAMPLES / "drcd", "test").examples)


def test_real_records(real_records):
    cmrc = real_records("cmrc2018")
    dev = read_cmrc(cmrc, "dev")
    assert dev.examples[0].id == "DEV_0_QUERY_0"
    assert dev.examples[0].answers[0] == ("光荣和ω-force", 11)
    assert [e.answers for e in read_cmrc(cmrc, "test").examples] == [None] * 5
    assert len(read_cmrc(cmrc, "trial")) == 4
    drcd = real_records("drcd")
    assert read(DRCD, drcd, "dev").examples[-1].answers == (("蘇達爾摩", 315), ("《蘇達爾摩》", 314))
    assert read(DRCD, drcd, "test").examples[0].id == "6171-11-1"


def _write(tmp_path, document, name="dev.json"):
    (tmp_path / name).write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")
    return tmp_path


def _one_question(answers, qid="Q1", context="青石镇始建于1736年"):
    return {"data": [{"paragraphs": [{"context": context, "qas": [{"id": qid, "question": "?", "answers": answers}]}]}]}


def test_offset_mismatch_names_the_question(tmp_path):
    _write(tmp_path, _one_question([{"text": "1736年", "answer_start": 1}]))  # the text sits at 6: 5 away
    with pytest.raises(InputError) as caught:
        read_cmrc(tmp_path, "dev")
    assert caught.value.record == "Q1" and caught.value.field == "answers[0].answer_start"
    assert "dev.json" in str(caught.value) and "1736年" in str(caught.value)


@pytest.mark.parametrize("start", [3, 5, 7, 9])
def test_an_offset_at_most_three_characters_off_is_moved_and_noted(tmp_path, start):
    _write(tmp_path, _one_question([{"text": "1736年", "answer_start": start}]))
    split = read_cmrc(tmp_path, "dev")
    assert split.examples[0].answers == (("1736年", 6),)
    assert len(split.notes) == 1 and "moved 1 answer offset(s)" in split.notes[0] and "Q1" in split.notes[0]


# -- gold answers that are not verbatim in the context (answer_start -1) ------------------

#: The shape of the official CMRC2018 dev set: three annotators' answers per question, some
#: of them rewritten (not a substring of the context) and marked with answer_start -1.
UNPLACED_DEV = {
    "version": "v1.0",
    "data": [{"paragraphs": [{
        "id": "DEV_9",
        "context": "青石镇始建于1736年，镇上的石桥长约四十米。",
        "qas": [
            {"id": "DEV_9_QUERY_0", "question": "青石镇始建于哪一年？", "answers": [
                {"text": "1736年", "answer_start": 6},
                {"text": "公元1736年", "answer_start": -1},
                {"text": "1736年", "answer_start": 6},
            ]},
            {"id": "DEV_9_QUERY_1", "question": "石桥有多长？", "answers": [
                {"text": "约40米", "answer_start": -1},
                {"text": "四十米", "answer_start": 19},
                {"text": "大约四十米", "answer_start": -1},
            ]},
        ],
    }]}],
}  # fmt: skip


def test_dev_answers_with_answer_start_minus_one_load_and_are_kept_for_scoring(tmp_path):
    """The official dev set has 193 such answers; the reader used to reject the whole split
    as 'placeholder answer … is this a test file?'."""
    _write(tmp_path, UNPLACED_DEV)
    dev = read_split(CMRC2018, tmp_path, "dev")  # the reader and the kernel's checks
    assert [e.answers for e in dev.examples] == [
        (("1736年", 6), ("公元1736年", None), ("1736年", 6)),
        (("约40米", None), ("四十米", 19), ("大约四十米", None)),
    ]
    assert len(dev.notes) == 1
    assert "3 gold answer(s) with answer_start -1 in 2 question(s)" in dev.notes[0]
    assert "first: question DEV_9_QUERY_0" in dev.notes[0] and dev.notes[0].startswith("dev.json: ")


def test_answers_without_offset_are_scored_by_their_text(tmp_path):
    _write(tmp_path, UNPLACED_DEV)
    examples = read_cmrc(tmp_path, "dev").examples
    # "公元1736年" and "约40米" exist only as -1 answers: an exact match on them counts
    result = compute(examples, [Prediction("DEV_9_QUERY_0", "公元1736年"), Prediction("DEV_9_QUERY_1", "约40米")])
    assert result.totals == {"em": 100.0, "f1": 100.0, "average": 100.0}
    # F1 against the best answer: "约40" vs "约40米" (tokens 约 40 米: LCS 2, P 1, R 2/3 -> 0.8)
    partial = compute(examples, [None, Prediction("DEV_9_QUERY_1", "约40")])
    assert partial.per_example["f1"] == [0.0, pytest.approx(80.0)]
    assert partial.totals["f1"] == pytest.approx(40.0) and partial.totals["em"] == 0.0


def test_drcd_reads_answers_without_offset_too(tmp_path):
    _write(tmp_path, UNPLACED_DEV)
    dev = read(DRCD, tmp_path, "dev")
    assert dev.examples[1].answers[0] == ("约40米", None) and "answer_start -1" in dev.notes[0]


def test_moved_and_unplaced_answers_are_noted_separately(tmp_path):
    _write(tmp_path, _one_question([{"text": "1736年", "answer_start": 4}, {"text": "乾隆元年", "answer_start": -1}]))
    split = read_cmrc(tmp_path, "dev")
    assert split.examples[0].answers == (("1736年", 6), ("乾隆元年", None))
    assert len(split.notes) == 2 and "moved 1" in split.notes[0] and "1 gold answer(s)" in split.notes[1]


def test_other_negative_offsets_are_errors(tmp_path):
    _write(tmp_path, _one_question([{"text": "1736年", "answer_start": -3}]))
    with pytest.raises(InputError, match="negative offset -3") as caught:
        read_cmrc(tmp_path, "dev")
    assert caught.value.record == "Q1" and caught.value.field == "answers[0].answer_start"


def test_fake_answer_placeholders_are_still_recognised(tmp_path):
    _write(tmp_path, _one_question([{"text": "FAKE_ANSWER_1", "answer_start": -1}]))
    with pytest.raises(InputError, match=r"placeholder answer 'FAKE_ANSWER_1'.*test file") as caught:
        read_cmrc(tmp_path, "dev")
    assert caught.value.record == "Q1" and caught.value.field == "answers[0].text"
    shutil.copy(tmp_path / "dev.json", tmp_path / "test.json")
    assert read_cmrc(tmp_path, "test").examples[0].answers is None
    # recognised by its text, whatever its offset
    _write(tmp_path, _one_question([{"text": "FAKE_ANSWER_12", "answer_start": 0}]))
    with pytest.raises(InputError, match="placeholder"):
        read_cmrc(tmp_path, "dev")


def test_test_answers_are_never_kept(tmp_path):
    _write(tmp_path, _one_question([{"text": "1736年", "answer_start": 6}]), name="test.json")
    assert read_cmrc(tmp_path, "test").examples[0].answers is None
    _write(tmp_path, _one_question([]), name="test.json")
    assert read_cmrc(tmp_path, "test").examples[0].answers is None


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
        read_cmrc(tmp_path, "dev")
    assert caught.value.field == field


def test_empty_answer_text_is_refused_by_the_kernel_with_the_question_id(tmp_path):
    _write(tmp_path, _one_question([{"text": " ", "answer_start": -1}]))
    with pytest.raises(InputError, match="empty answer text") as caught:
        read_split(CMRC2018, tmp_path, "dev")
    assert str(caught.value).startswith(f"{tmp_path / 'dev.json'} (id Q1): field 'answers'")


def test_malformed_json_names_the_line(tmp_path):
    (tmp_path / "dev.json").write_text('{"data": [\n{"paragraphs": ]}', encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_cmrc(tmp_path, "dev")
    assert caught.value.line == 2


def test_duplicate_question_id(tmp_path):
    document = _one_question([{"text": "1736年", "answer_start": 6}])
    qas = document["data"][0]["paragraphs"][0]["qas"]
    qas.append(dict(qas[0]))
    _write(tmp_path, document)
    with pytest.raises(InputError, match="duplicate"):
        read_cmrc(tmp_path, "dev")
    # in a test file the kernel finds it, naming both questions
    _write(tmp_path, document, name="test.json")
    with pytest.raises(InputError, match="duplicate id 'Q1'") as caught:
        read_split(CMRC2018, tmp_path, "test")
    assert "test.json (id Q1)" in str(caught.value)
