"""The Hugging Face mirror mapping, with handmade rows (``datasets`` is not needed)."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path

import pytest

from clue_core.errors import DataError
from clue_core.reading import read_split
from clue_core.specs import resolve
from clue_tasks_classic import hf_mirror, labels
from clue_tasks_classic.catalog import task
from clue_tasks_classic.hf_mirror import MirrorError, export_rows, label_string, main, to_official

WSC_TARGET = {"span1_text": "小明", "span2_text": "他", "span1_index": 0, "span2_index": 6}


def test_label_indices_map_back_to_clue_label_strings() -> None:
    assert label_string("tnews", 0) == "100" and label_string("tnews", 5) == "106"  # 105 does not exist
    assert label_string("iflytek", 118) == "118"
    assert [label_string("cmnli", i) for i in range(3)] == ["neutral", "entailment", "contradiction"]
    assert [label_string("cluewsc2020", i) for i in range(2)] == ["true", "false"]
    assert label_string("afqmc", -1) is None
    with pytest.raises(MirrorError, match=r"out of range 0\.\.14"):
        label_string("tnews", 15)
    with pytest.raises(MirrorError, match="expected a class index"):
        label_string("csl", True)


def test_rows_become_official_records() -> None:
    assert to_official("tnews", {"idx": 4, "sentence": "标题", "label": 2}, "train") == {
        "label": "102", "label_desc": "news_entertainment", "sentence": "标题", "keywords": ""}
    assert to_official("iflytek", {"idx": 0, "sentence": "应用", "label": 11}, "dev") == {
        "label": "11", "label_des": "薅羊毛", "sentence": "应用"}
    assert to_official("cmnli", {"idx": 9, "sentence1": "a", "sentence2": "b", "label": 1}, "dev") == {
        "sentence1": "a", "sentence2": "b", "label": "entailment"}
    assert to_official("ocnli", {"idx": 9, "sentence1": "a", "sentence2": "b", "label": 2}, "train") == {
        "id": 9, "sentence1": "a", "sentence2": "b", "label": "contradiction"}
    assert to_official("csl", {"idx": 0, "corpus_id": 2415, "abst": "摘要", "keyword": ["甲", "乙"], "label": 1},
                       "train") == {"id": 2415, "abst": "摘要", "keyword": ["甲", "乙"], "label": "1"}
    assert to_official("cluewsc2020", {"idx": 3, "text": "t", "target": WSC_TARGET, "label": 1}, "dev") == {
        "target": WSC_TARGET, "idx": 3, "text": "t", "label": "false"}


def test_test_rows_lose_the_placeholder_label_and_keep_an_id() -> None:
    assert to_official("afqmc", {"idx": 7, "sentence1": "a", "sentence2": "b", "label": -1}, "test") == {
        "id": 7, "sentence1": "a", "sentence2": "b"}
    assert to_official("cluewsc2020", {"idx": 3, "text": "t", "target": WSC_TARGET, "label": -1}, "test") == {
        "target": WSC_TARGET, "id": 3, "text": "t"}
    assert to_official("diagnostics", {"idx": 1, "sentence1": "p", "sentence2": "h", "label": -1}, "test") == {
        "index": 1, "premise": "p", "hypothesis": "h"}


def test_broken_rows_are_reported() -> None:
    with pytest.raises(MirrorError, match="afqmc train row 3: a train row without a label"):
        to_official("afqmc", {"idx": 3, "sentence1": "a", "sentence2": "b", "label": -1}, "train")
    with pytest.raises(MirrorError, match="no 'sentence2' column"):
        to_official("cmnli", {"idx": 3, "sentence1": "a", "label": 0}, "dev")
    with pytest.raises(MirrorError, match="no mirror mapping for task 'chid'"):
        to_official("chid", {}, "train")


class Split(list):
    """A list of rows with a ``features`` mapping, as a ``datasets.Dataset`` offers."""

    def __init__(self, rows: list[dict], names: list[str]) -> None:
        super().__init__(rows)
        self.features = {"label": types.SimpleNamespace(names=names)}


def cmnli_splits(names: list[str] | None = None) -> dict[str, Split]:
    names = names or ["neutral", "entailment", "contradiction"]
    rows = [{"idx": i, "sentence1": f"前提{i}", "sentence2": f"假设{i}", "label": i % 3} for i in range(6)]
    test = [{"idx": i, "sentence1": f"前提{i}", "sentence2": f"假设{i}", "label": -1} for i in range(4)]
    return {"train": Split(rows, names), "validation": Split(rows[:3], names), "test": Split(test, names)}


def test_exported_folder_reads_with_the_normal_reader_but_has_no_test_version(tmp_path: Path) -> None:
    written = export_rows("cmnli", cmnli_splits(), tmp_path)
    assert written == {"train.json": 6, "dev.json": 3, "test.unverified.json": 4}
    spec = task("cmnli")
    read = resolve(spec.reader)
    dev = read(spec, tmp_path, "dev")
    assert [e.label for e in dev.examples] == ["neutral", "entailment", "contradiction"]
    assert [e.id for e in dev.examples] == [0, 1, 2]
    for version in spec.test_versions:
        with pytest.raises(DataError):
            read(spec, tmp_path, version.split)


def test_tnews_export_writes_labels_json(tmp_path: Path) -> None:
    names = [str(n) for n in (100, 101, 102, 103, 104, 106, 107, 108, 109, 110, 112, 113, 114, 115, 116)]
    rows = Split([{"idx": 0, "sentence": "标题", "label": 14}], names)
    export_rows("tnews", {"train": rows}, tmp_path)
    result = read_split(task("tnews"), tmp_path, "train")
    assert result.examples[0].label == "116"
    assert result.files[-1] == str(tmp_path / "labels.json")  # the exported label file reads back
    exported = [json.loads(line) for line in (tmp_path / "labels.json").read_text(encoding="utf-8").splitlines()]
    assert {r["label"]: r["label_desc"] for r in exported} == labels.TNEWS_DESCRIPTIONS


def test_a_changed_label_order_is_refused(tmp_path: Path) -> None:
    with pytest.raises(MirrorError, match="refusing to guess"):
        export_rows("cmnli", cmnli_splits(["entailment", "neutral", "contradiction"]), tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_module_entry_without_datasets_is_one_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "datasets", None)  # import datasets -> ImportError
    assert main(["afqmc", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pip install 'clue-tasks-classic[hf]'" in err
    assert not (tmp_path / "out").exists()


def test_module_entry_with_a_stand_in_datasets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    calls = []

    def load_dataset(path: str, name: str, revision: str | None = None) -> dict[str, Split]:
        calls.append((path, name, revision))
        return cmnli_splits()

    monkeypatch.setitem(sys.modules, "datasets", types.SimpleNamespace(load_dataset=load_dataset))
    assert main(["cmnli", str(tmp_path), "--revision", "abc123"]) == 0
    assert calls == [(hf_mirror.HUB_DATASET, "cmnli", "abc123")]
    out = capsys.readouterr().out
    assert "test.unverified.json (4)" in out and "no submission file is made from it" in out
