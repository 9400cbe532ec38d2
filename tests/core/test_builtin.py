"""Built-in metrics, writers, the baseline model, atomic writes and JSON Lines reading."""

from __future__ import annotations

import json

import pytest

from clue_builtin.baseline import BaselineLearner, first_sentence
from clue_builtin.metrics import accuracy, macro_f1
from clue_builtin.writers import read_json_object, read_jsonl_labels, write_json_object, write_jsonl_labels
from clue_core.atomic import atomic_open, write_jsonl
from clue_core.errors import InputError
from clue_core.examples import ClassificationExample as C
from clue_core.examples import MultipleChoiceExample as M
from clue_core.examples import Prediction as P
from clue_core.examples import SpanExample
from clue_core.jsonio import field, iter_jsonl
from clue_core.plugin import RunContext, Setting, TaskSpec, TestVersion


def test_accuracy_counts_missing_predictions_as_wrong_and_skips_unlabelled():
    examples = [C(0, "a", label="x"), C(1, "b", label="y"), C(2, "c", label="x"), C(3, "d")]
    predictions = [P(0, "x"), P(1, "x"), None, P(3, "y")]
    result = accuracy(examples, predictions)
    assert result.totals == {"accuracy": pytest.approx(100 / 3)}
    assert result.per_example == {"accuracy": [100.0, 0.0, 0.0, None]}  # for bootstrap intervals


def test_macro_f1_by_hand():
    # gold x x y y, predicted x y y y: F1(x) = 2/3, F1(y) = 4/5, mean = 11/15
    examples = [C(i, "t", label=g) for i, g in enumerate("xxyy")]
    predictions = [P(i, p) for i, p in enumerate("xyyy")]
    assert macro_f1(examples, predictions)["macro_f1"] == pytest.approx(100 * 11 / 15)


def test_accuracy_on_choice_indices():
    examples = [M("q1", "c", "q", ("a", "b"), label=1), M("q2", "c", "q", ("a", "b", "c"), label=2)]
    assert accuracy(examples, [P("q1", 1), P("q2", 0)]).totals == {"accuracy": 50.0}


def test_jsonl_writer_round_trip_keeps_id_types_and_order(tmp_path):
    examples = [C(5, "a"), C("x-1", "b")]
    path = tmp_path / "out.json"
    write_jsonl_labels(path, examples, [P(5, "1"), P("x-1", "0")])
    assert path.read_text().splitlines() == ['{"id": 5, "label": "1"}', '{"id": "x-1", "label": "0"}']
    assert read_jsonl_labels(path) == [(5, "1"), ("x-1", "0")]


def test_writers_refuse_misaligned_predictions(tmp_path):
    with pytest.raises(ValueError, match="does not match"):
        write_jsonl_labels(tmp_path / "o.json", [C(1, "a")], [P(2, "x")])
    assert not (tmp_path / "o.json").exists()


def test_json_object_writer_and_duplicate_keys(tmp_path):
    path = tmp_path / "cmrc.json"
    write_json_object(path, [SpanExample("q1", "ctx", "q")], [P("q1", "答案")])
    assert json.loads(path.read_text(encoding="utf-8")) == {"q1": "答案"}
    path.write_text('{"a": 1, "a": 2}')
    with pytest.raises(InputError, match="field 'a': given more than once"):
        read_json_object(path)


def test_atomic_open_leaves_nothing_on_failure(tmp_path):
    target = tmp_path / "file.json"
    target.write_text("old")
    with pytest.raises(RuntimeError), atomic_open(target) as handle:
        handle.write("half")
        raise RuntimeError("interrupted")
    assert target.read_text() == "old"
    assert list(tmp_path.iterdir()) == [target]
    write_jsonl(target, [{"a": "中"}])
    assert target.read_text(encoding="utf-8") == '{"a": "中"}\n'


def test_iter_jsonl_reports_line_and_field(tmp_path):
    path = tmp_path / "train.json"
    path.write_text('{"a": 1}\n\n{"a": "x"}\n[1]\n')
    records = iter_jsonl(path)
    line, record = next(records)
    assert (line, field(record, "a", int, path=path, line=line)) == (1, 1)
    line, record = next(records)
    with pytest.raises(InputError, match=r"train.json:3: field 'a': expected an integer, got str"):
        field(record, "a", int, path=path, line=line)
    with pytest.raises(InputError, match=r"train.json:4: expected a JSON object, got list"):
        next(records)
    with pytest.raises(InputError, match="field 'b': missing"):
        field({}, "b", str, path=path, line=1)
    with pytest.raises(InputError, match="got bool"):
        field({"n": True}, "n", int, path=path, line=1)


def test_baseline_majority_first_sentence_and_saved_state(tmp_path):
    learner = BaselineLearner("t", "classification", ("a", "b"))
    context = RunContext(task=TaskSpec("t", "classification", "d", "m:r"))
    learner.fit([C(0, "x", label="b"), C(1, "y", label="b"), C(2, "z", label="a")], [], context)
    assert [p.value for p in learner.predict([C(9, "q")])] == ["b"]
    learner.save(tmp_path)
    assert BaselineLearner.load(tmp_path).majority == "b"
    assert first_sentence("第一句。第二句。") == "第一句。"
    mc = BaselineLearner("t", "multiple_choice")
    mc.fit([M(0, "c", "q", ("a", "b", "c", "d"), label=3)], [], context)
    assert mc.predict([M(1, "c", "q", ("a", "b"))])[0].value == 0  # index 3 does not exist here


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"model": "baseline"}', "KeyError"),
        ("not json", "JSONDecodeError"),
        ('{"model": "baseline", "task": "t", "kind": "classification", "labels": ["0", "1"], "majority": "7"}',
         "'7' is not one of its labels"),
    ],
)
def test_a_damaged_saved_baseline_is_one_clear_error(tmp_path, content, message):
    from clue_core.errors import ClueError

    (tmp_path / "clue_model.json").write_text(content)
    with pytest.raises(ClueError, match=message):
        BaselineLearner.load(tmp_path)


def test_specs_are_frozen_slotted_values():
    import dataclasses

    spec = TaskSpec("t", "classification", "d", "m:r", labels=("a",))
    same = TaskSpec(name="t", kind="classification", description="d", reader="m:r", labels=("a",))
    assert spec == same and spec != dataclasses.replace(spec, name="u")
    assert spec.recommendations == {} and spec.recommendations is not same.recommendations  # fresh per instance
    assert hash(TestVersion("1.1", "test", "f.json")) == hash(TestVersion("1.1", "test", "f.json"))
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.name = "changed"  # type: ignore[misc]
    assert not hasattr(spec, "__dict__")  # slots
    with pytest.raises(TypeError, match="unexpected keyword argument 'nmae'"):
        TaskSpec(nmae="t", kind="classification", description="d", reader="m:r")  # type: ignore[call-arg]
    with_test = dataclasses.replace(spec, test_versions=(TestVersion("1.1", "test", "f.json"),))
    assert with_test.as_dict()["test_versions"] == [{"version": "1.1", "split": "test", "submission_file": "f.json"}]
    assert Setting("n", int, 1, "h").as_dict()["type"] == "int"
