"""Reading CLUENER2020's files: offsets converted, odd real cases kept, bad input one line.

The bundled sample is cut from the official files (dev and test: their first 16 lines; train: its
first 30, line 202 with one string under two types, line 1507 with a span inside another); the
edge cases that the official files do not have (an entity text differing from the text at its
offsets: none in train or dev) are written here.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clue_core.kernel import Kernel
from clue_core.plugin import InputError, gold_of, read_split, resolve
from clue_tasks_ner.examples import EntitySpansExample
from clue_tasks_ner.reader import NOTED

from .conftest import SAMPLE, lines

TEXT = "彭小军认为，国内银行现在走的是台湾的发卡模式"


def test_the_sample_reads_with_exclusive_ends_and_line_ids(kernel: Kernel) -> None:
    task = kernel.task("cluener2020")
    dev = read_split(task, SAMPLE, "dev")
    assert [e.id for e in dev.examples] == list(range(16)) and dev.notes == ()
    assert dev.examples[0].entities == (("name", 0, 3), ("address", 15, 17))
    last = dev.examples[15]  # 爱情公寓》 at [[0, 4]], 爱情公寓 at [[16, 19], [38, 41]]: one string, two spans
    assert [(k, last.text[s:e]) for k, s, e in last.entities] == [
        ("movie", "爱情公寓》"), ("movie", "爱情公寓"), ("movie", "爱情公寓")]
    assert {k for e in dev.examples for k, _, _ in e.entities} == set(task.labels)
    for example, record in zip(dev.examples, lines(SAMPLE / "dev.json")):
        assert example.text == record["text"]
        assert sorted((k, example.text[s:e]) for k, s, e in example.entities) == sorted(
            (k, entity) for k, entities in record["label"].items() for entity, spans in entities.items()
            for _ in spans)
    test = read_split(task, SAMPLE, "test")
    assert [e.id for e in test.examples] == list(range(16)) and all(e.entities is None for e in test.examples)
    assert gold_of(dev.examples[0]) == [["name", 0, 3], ["address", 15, 17]] and gold_of(test.examples[0]) is None


def test_overlapping_spans_and_one_string_under_two_types_are_kept(kernel: Kernel) -> None:
    train = read_split(kernel.task("cluener2020"), SAMPLE, "train").examples
    assert len(train) == 32
    both = train[30]  # official train line 202: 长滩岛 as address and as scene
    assert [(k, s, e) for k, s, e in both.entities] == [("address", 6, 9), ("scene", 17, 20), ("scene", 33, 36)]
    nested = train[31]  # official train line 1507: 招商银行 inside the book title
    assert ("book", 15, 35) in nested.entities and ("company", 16, 20) in nested.entities


def write(folder: Path, split: str, records: list[dict]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{split}.json"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


def test_an_entity_text_differing_from_the_text_is_read_and_named(kernel: Kernel, tmp_path: Path) -> None:
    records = [{"text": TEXT, "label": {"name": {"彭小军": [[0, 2]]}}}] * 16
    records = [*records, {"text": TEXT, "label": {"name": {"彭大军": [[0, 2]]}, "address": {"台湾": [[15, 16]]}}}]
    write(tmp_path, "dev", records)
    dev = read_split(kernel.task("cluener2020"), tmp_path, "dev")
    assert dev.notes == ("dev.json:17: entity '彭大军' at [0, 2] is '彭小军' in the text",)
    assert dev.examples[16].entities == (("name", 0, 3), ("address", 15, 17))


def test_many_differing_entities_are_counted_after_the_first_few(kernel: Kernel, tmp_path: Path) -> None:
    write(tmp_path, "dev", [{"text": TEXT, "label": {"name": {"彭大军": [[0, 2]]}}}] * (NOTED + 3))
    notes = read_split(kernel.task("cluener2020"), tmp_path, "dev").notes
    assert len(notes) == NOTED + 1 and notes[0].startswith("dev.json:1: entity '彭大军'")
    assert notes[-1] == ("dev.json: 3 more entities whose text differs from the text at their offsets "
                         "(each read as its offsets say)")


@pytest.mark.parametrize(("label", "message"), [
    ({"name": {"彭小军": [[20, 22]]}},
     "name '彭小军': span [20, 22] is not inside the text (length 22, offsets inclusive)"),
    ({"name": {"彭小军": [[2, 0]]}},
     "name '彭小军': span [2, 0] is not inside the text (length 22, offsets inclusive)"),
    ({"person": {"彭小军": [[0, 2]]}},
     "unknown entity type 'person' (known: address, book, company, game, government, movie, name, organization, "
     "position, scene)"),
    ({"name": ["彭小军"]}, "name: expected an object {entity text: [[start, end], ...]}, got list"),
    ({"name": {"彭小军": []}}, "name '彭小军': expected a non-empty list of [start, end], got []"),
    ({"name": {"彭小军": [[0, "2"]]}}, "name '彭小军': expected [start, end] integers, got [0, \"2\"]"),
    ({"name": {"彭小军": [0, 2]}}, "name '彭小军': expected [start, end] integers, got 0"),
    ("name", "expected an object, got str"),
])
def test_a_bad_label_is_one_line_naming_file_line_and_field(run_cli, kernel: Kernel, tmp_path: Path,
                                                            label: object, message: str) -> None:
    data = tmp_path / "data"
    write(data, "train", [{"text": TEXT, "label": {"name": {"彭小军": [[0, 2]]}}}])
    path = write(data, "dev", [{"text": TEXT, "label": {}}, {"text": TEXT, "label": label}])
    result = run_cli("run", "cluener2020", "--model", "ner-dictionary", "--data-dir", data, "-o", tmp_path / "out",
                     kernel=kernel)
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines()[-1] == f"error: {path}:2: field 'label': {message}"
    assert not (tmp_path / "out").exists()


def test_a_missing_field_is_one_line(kernel: Kernel, tmp_path: Path) -> None:
    path = write(tmp_path, "dev", [{"text": TEXT}])
    with pytest.raises(InputError, match=r"^.*dev\.json:1: field 'label': missing$"):
        read_split(kernel.task("cluener2020"), tmp_path, "dev")
    path = write(tmp_path, "test", [{"text": TEXT}])
    with pytest.raises(InputError, match=rf"^{path}:1: field 'id': missing$"):
        read_split(kernel.task("cluener2020"), tmp_path, "test")


def test_the_kinds_checks(kernel: Kernel) -> None:
    task, kind = kernel.task("cluener2020"), kernel.kind("entity_spans")
    check_example, check_prediction = resolve(kind.check_example), resolve(kind.check_prediction)
    example = EntitySpansExample(0, "张三来了", (("name", 0, 2),))
    assert check_example(task, example) is None
    assert check_example(task, EntitySpansExample(0, "张三", (("name", 0, 3),))) == (
        "label", "span [0, 3) of name (end exclusive) is not inside the text (length 2)")
    assert check_example(task, EntitySpansExample(0, "张三", (("person", 0, 2),)))[1].startswith(
        "unknown entity type 'person'")
    assert check_prediction(task, example, [["name", 0, 2]]) is None and check_prediction(task, example, []) is None
    assert check_prediction(task, example, (("name", 0, 2),)) is None
    assert check_prediction(task, example, "张三") == 'expected a list of [type, start, end] triples, got "张三"'
    assert check_prediction(task, example, [["name", 0]]) == 'expected a [type, start, end] triple, got ["name", 0]'
    assert check_prediction(task, example, [[1, 0, 2]]) == "expected a type string, got 1"
    assert check_prediction(task, example, [["name", 0, True]]) == "expected integer offsets, got [0, true]"
    assert check_prediction(task, example, [["name", 2, 2]]) == (
        "span [2, 2) of name (end exclusive) is not inside the text (length 4)")
    assert check_prediction(task, example, [["name", -1, 2]]).startswith("span [-1, 2)")
