"""CHID reader and joint decoding."""

from __future__ import annotations

import json
import math

import pytest

from clue_core.errors import ClueError, InputError
from clue_core.examples import MultipleChoiceExample, Prediction
from clue_core.reading import read_split
from clue_tasks_mrc import chid
from clue_tasks_mrc.hooks import CHID

from .conftest import SAMPLES


def test_sample_blanks_become_examples_grouped_by_line():
    dev = chid.read(CHID, SAMPLES / "chid", "dev")
    answers = json.loads((SAMPLES / "chid" / "dev_answer.json").read_text(encoding="utf-8"))
    assert [e.id for e in dev.examples] == list(answers)
    assert [e.label for e in dev.examples] == list(answers.values())
    first = next(e for e in dev.examples if e.group == "dev-1")
    assert len(first.choices) == 10 and first.choices[first.label] == "车水马龙"
    assert first.context.startswith("春节前的商业街上____，") and "#idiom" not in first.context
    assert dev.files[1].endswith("dev_answer.json") and len(dev.where) == len(dev)
    assert dev.where[dev.examples.index(first)] == f"{dev.files[0]}:2"
    # a passage with two blanks: each sees itself as ____ and the other masked
    one, two = [e for e in chid.read(CHID, SAMPLES / "chid", "test1.0").examples if e.group == "test1.0-0"]
    assert one.context.index("____") < one.context.index(chid.OTHER_BLANK)
    assert two.context.index(chid.OTHER_BLANK) < two.context.index("____")
    assert "#idiom" not in one.context + two.context


def test_window_and_test_versions():
    passage = "一二三#idiom000001#四五#idiom000002#六"
    assert chid.blank_window(passage, 3, 16, window=2) == "二三____四五"
    assert chid.blank_window(passage, 3, 16, window=4) == "一二三____四五□□"
    assert chid.blank_window(passage, 18, 31, window=3) == "□四五____六"
    for split in ("test1.0", "test1.1"):
        examples = chid.read(CHID, SAMPLES / "chid", split).examples
        assert examples and all(e.label is None for e in examples)
        assert all(e.group.startswith(split + "-") for e in examples)


def test_real_records(real_records):
    folder = real_records("chid")
    dev = chid.read(CHID, folder, "dev")
    assert dev.examples[0].id == "#idiom577157#" and dev.examples[0].label == 5
    assert len(dev) == 7
    test = chid.read(CHID, folder, "test1.1")
    assert {"#idiom600169#", "#idiom600170#"} <= {e.id for e in test.examples}
    assert len({e.group for e in test.examples}) < len(test)


def test_missing_answer_names_the_blank(tmp_path):
    (tmp_path / "dev.json").write_text(
        json.dumps({"candidates": ["甲甲甲甲", "乙乙乙乙"], "content": ["前#idiom000007#后"]}) + "\n", encoding="utf-8"
    )
    (tmp_path / "dev_answer.json").write_text("{}", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        chid.read(CHID, tmp_path, "dev")
    assert caught.value.record == "#idiom000007#"


def test_bad_line_names_line_and_field(tmp_path):
    (tmp_path / "test1.1.json").write_text(
        json.dumps({"candidates": ["甲"], "content": ["x"]}) + "\n" + json.dumps({"content": ["y"]}) + "\n",
        encoding="utf-8",
    )
    with pytest.raises(InputError) as caught:
        chid.read(CHID, tmp_path, "test1.1")
    assert (caught.value.line, caught.value.field) == (2, "candidates")


def _line(scores_per_blank, group="g"):
    examples = [
        MultipleChoiceExample(id=f"#idiom{i:06d}#", context="", question="", choices=("A", "B", "C"), group=group)
        for i in range(len(scores_per_blank))
    ]
    predictions = [
        Prediction(e.id, max(range(3), key=row.__getitem__), tuple(row)) for e, row in zip(examples, scores_per_blank)
    ]
    return examples, predictions


def _logs(rows):
    return [[math.log(x) for x in row] for row in rows]


def test_exact_and_greedy_differ_where_greedy_is_suboptimal():
    # blank0: A .50 B .49 C .01 ; blank1: A .45 B .30 C .25
    examples, predictions = _line(_logs([[0.50, 0.49, 0.01], [0.45, 0.30, 0.25]]))
    # greedy fixes the single best pair blank0=A (.50), then blank1=B: joint .50 * .30 = .15
    assert [p.value for p in chid.decode_greedy(examples, predictions)] == [0, 1]
    # exact: blank0=B, blank1=A: joint .49 * .45 = .2205, the best of the 6 assignments
    assert [p.value for p in chid.decode_exact(examples, predictions)] == [1, 0]
    assert [p.value for p in chid.decode(examples, predictions, settings={"chid_decode": "greedy"})] == [0, 1]
    assert [p.value for p in chid.decode(examples, predictions, settings={"chid_decode": "exact"})] == [1, 0]
    assert [p.value for p in chid.decode(examples, predictions)] == [1, 0]


def test_greedy_compares_probabilities_across_blanks_not_raw_scores():
    # raw: blank0 A 10 B 9.9 ; blank1 A 1 (probabilities ~.52/.48 and ~.995)
    examples, predictions = _line([[10.0, 9.9, 0.0], [1.0, -5.0, -5.0]])
    # highest raw score first would fix blank0=A and leave blank1 a hopeless choice;
    # highest probability first fixes blank1=A (.995), then blank0=B
    assert [p.value for p in chid.decode_greedy(examples, predictions)] == [1, 0]
    assert [p.value for p in chid.decode_exact(examples, predictions)] == [1, 0]


def test_three_blanks_get_distinct_choices_and_ties_are_deterministic():
    examples, predictions = _line([[0.0, 0.0, 0.0]] * 3)
    assert [p.value for p in chid.decode_exact(examples, predictions)] == [0, 1, 2]
    assert [p.value for p in chid.decode_greedy(examples, predictions)] == [0, 1, 2]


def test_groups_are_independent_and_unscored_lines_unchanged():
    ex1, pr1 = _line(_logs([[0.50, 0.49, 0.01], [0.45, 0.30, 0.25]]), group="a")
    ex2 = [MultipleChoiceExample(id="#idiom000009#", context="", question="", choices=("A", "B"), group="b")]
    pr2 = [Prediction("#idiom000009#", 1)]
    decoded = chid.decode_exact([*ex1, *ex2], [*pr2, *pr1])  # order of predictions does not matter
    assert [(p.id, p.value) for p in decoded] == [(ex1[0].id, 1), (ex1[1].id, 0), ("#idiom000009#", 1)]


def test_unknown_decode_method():
    examples, predictions = _line([[0.0, 0.0, 0.0]])
    with pytest.raises(ClueError, match="chid_decode"):
        chid.decode(examples, predictions, settings={"chid_decode": "beam"})


def test_decode_setting_is_declared_with_its_choices():
    (setting,) = CHID.decode_settings
    assert (setting.name, setting.type, setting.default, setting.choices) == ("chid_decode", str, "exact",
                                                                              ("exact", "greedy"))
    assert "chid_decode" not in CHID.recommendations


def test_answer_index_out_of_range_is_found_by_the_kernel_naming_the_line(tmp_path):
    lines = [{"candidates": ["甲甲甲甲", "乙乙乙乙"], "content": ["前#idiom000007#后"]},
             {"candidates": ["甲甲甲甲", "乙乙乙乙"], "content": ["前#idiom000008#后"]}]
    (tmp_path / "dev.json").write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    (tmp_path / "dev_answer.json").write_text('{"#idiom000007#": 1, "#idiom000008#": 2}', encoding="utf-8")
    with pytest.raises(InputError, match="out of range for 2 choices") as caught:
        read_split(CHID, tmp_path, "dev")
    assert (caught.value.path, caught.value.line, caught.value.field) == (str(tmp_path / "dev.json"), 2, "label")


def test_duplicate_blank_in_a_test_file_is_found_by_the_kernel(tmp_path):
    line = json.dumps({"candidates": ["甲甲甲甲", "乙乙乙乙"], "content": ["前#idiom000007#后"]})
    (tmp_path / "test1.1.json").write_text(f"{line}\n{line}\n", encoding="utf-8")
    with pytest.raises(InputError, match="duplicate id '#idiom000007#'") as caught:
        read_split(CHID, tmp_path, "test1.1")
    assert caught.value.line == 2 and f"{tmp_path / 'test1.1.json'}:1" in str(caught.value)


def test_duplicate_blank_with_answers_is_a_reader_error(tmp_path):
    line = json.dumps({"candidates": ["甲甲甲甲", "乙乙乙乙"], "content": ["前#idiom000007#后"]})
    (tmp_path / "dev.json").write_text(f"{line}\n{line}\n", encoding="utf-8")
    (tmp_path / "dev_answer.json").write_text('{"#idiom000007#": 1}', encoding="utf-8")
    with pytest.raises(InputError, match="occurs twice") as caught:
        chid.read(CHID, tmp_path, "dev")
    assert caught.value.line == 2


def test_joint_decoding_keeps_what_the_model_said():
    from clue_core.plugin import MultipleChoiceExample, Prediction
    from clue_tasks_mrc.chid import decode

    examples = [MultipleChoiceExample(f"#idiom{i}#", "c", "q", ("甲", "乙"), group="p") for i in range(2)]
    predictions = [Prediction(e.id, 0, (-0.1, -2.0), {"prompt": f"p{i}"}) for i, e in enumerate(examples)]
    decoded = decode(examples, predictions)
    assert sorted(p.value for p in decoded) == [0, 1]  # distinct candidates per passage
    assert [p.raw for p in decoded] == [{"prompt": "p0"}, {"prompt": "p1"}]
