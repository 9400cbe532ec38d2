"""cluener_predict.json: written in the gold's own shape, read back into the kind's spans."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clue_core.kernel import Kernel
from clue_core.plugin import Prediction, read_split
from clue_tasks_ner.submission import label_of, read, write

from .conftest import DATA, SAMPLE, lines


def test_the_gold_written_as_predictions_is_the_official_label_again(kernel: Kernel, tmp_path: Path) -> None:
    dev = read_split(kernel.task("cluener2020"), SAMPLE, "dev").examples
    path = tmp_path / "cluener_predict.json"
    write(path, dev, [Prediction(e.id, [list(s) for s in e.entities]) for e in dev])
    rows = lines(path)
    assert [r["id"] for r in rows] == list(range(16))
    assert [r["label"] for r in rows] == [r["label"] for r in lines(SAMPLE / "dev.json")]
    assert "彭小军" in path.read_text(encoding="utf-8")  # not \\u-escaped, as the official writers
    # read back: the same spans, end exclusive
    assert [value for _, value in read(path)] == [[list(s) for s in e.entities] for e in dev]


def test_types_in_the_official_order_spans_in_text_order_and_empty_lines() -> None:
    text = "张三在北京见了李四和张三"
    label = label_of(text, [["name", 10, 12], ["address", 3, 5], ["name", 0, 2], ["name", 7, 9], ["name", 0, 2]])
    assert json.dumps(label, ensure_ascii=False) == (
        '{"address": {"北京": [[3, 4]]}, "name": {"张三": [[0, 1], [10, 11]], "李四": [[7, 8]]}}')
    assert label_of(text, []) == {}


def test_a_file_without_ids_takes_line_positions_blank_lines_skipped(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    text = '{"label": {}}\n\n{"label": {"name": {"张三": [[0, 1]]}}}\n{"id": 7, "label": {}}'
    path.write_text(text, encoding="utf-8")
    assert read(path) == [(0, []), (1, [["name", 0, 2]]), (7, [])]
    assert [entry_id for entry_id, _ in read(DATA / "ner_predict16.json")] == list(range(16))


def test_writing_refuses_misaligned_predictions(kernel: Kernel, tmp_path: Path) -> None:
    test = read_split(kernel.task("cluener2020"), SAMPLE, "test").examples
    with pytest.raises(ValueError, match="15 predictions for 16 examples"):
        write(tmp_path / "x.json", test, [Prediction(e.id, []) for e in test[:15]])
    with pytest.raises(ValueError, match="prediction id 1 does not match example id 0"):
        write(tmp_path / "x.json", test[:1], [Prediction(1, [])])
