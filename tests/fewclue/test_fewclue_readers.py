"""The FewCLUE readers: the samples against their raw records, the split protocol, where data is
looked up, each task's quirks, and broken input (one error naming file, line and field)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clue_core.data import sample_dir
from clue_core.errors import DataError, InputError
from clue_core.examples import ClassificationExample, MultipleChoiceExample
from clue_core.reading import read_split
from tests.fewclue.helpers import NAMES, SAMPLE_FILES, SPECS, copy_sample, folder, raw_records, read, write_lines

SPLITS = {"train_few_all.json": "train", "dev_few_all.json": "dev", "test_public.json": "test_public",
          "test.json": "test"}


def expected_id(name: str, split: str, record: dict, line: int):
    if name == "fewclue-cluewsc":
        return record["id"] if split == "test" else record["idx"]
    return record["id"]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("file", SAMPLE_FILES)
def test_samples_read_as_their_raw_records(name: str, file: str) -> None:
    split = SPLITS[file]
    records = raw_records(sample_dir(SPECS[name]) / file)
    part = read_split(SPECS[name], sample_dir(SPECS[name]), split)
    assert len(part.examples) == len(records) >= 5
    seen = set()
    for line, (example, record) in enumerate(zip(part.examples, records), start=1):
        assert part.where[line - 1].endswith(f"{file}:{line}")
        own = expected_id(name, split, record, line)
        # CSLDCP's test_public repeats an id: the later record is read as '<id>#<line>'
        assert example.id == (f"{own}#{line}" if own in seen else own)
        seen.add(own)
        if name == "fewclue-chid":
            assert isinstance(example, MultipleChoiceExample)
            assert example.choices == tuple(record["candidates"]) and len(example.choices) == 7
            assert example.context == record["content"].replace("#idiom#", "____")
            assert example.label == (None if split == "test" else record["answer"])
        else:
            assert isinstance(example, ClassificationExample)
            assert example.label == (None if split == "test" else str(record["label"]))


def test_sample_labels_cover_small_label_sets() -> None:
    for name in ("fewclue-eprstmt", "fewclue-tnews", "fewclue-ocnli", "fewclue-bustm", "fewclue-csl",
                 "fewclue-cluewsc"):
        for split in ("train", "dev", "test_public"):
            labels = {e.label for e in read_split(SPECS[name], sample_dir(SPECS[name]), split).examples}
            assert labels == set(SPECS[name].labels), (name, split)


def _protocol_folder(tmp_path: Path) -> Path:
    """EPRSTMT's folder with all six train/dev pairs, each pair's ids telling which file it is."""
    task = copy_sample("fewclue-eprstmt", tmp_path / "datasets")
    base = raw_records(task / "train_few_all.json")[:2]
    for pair in ("0", "1", "2", "3", "4", "few_all"):
        for kind, offset in (("train", 0), ("dev", 500)):
            tag = 99 if pair == "few_all" else int(pair)
            write_lines(task / f"{kind}_{pair}.json", [dict(r, id=offset + tag * 10 + i) for i, r in enumerate(base)])
    return tmp_path / "datasets"


@pytest.mark.parametrize("pair", ["few_all", "0", "1", "2", "3", "4"])
def test_the_split_setting_chooses_the_pair(tmp_path: Path, pair: str) -> None:
    root = _protocol_folder(tmp_path)
    tag = 99 if pair == "few_all" else int(pair)
    train = read("fewclue-eprstmt", root, "train", {"split": pair})
    dev = read("fewclue-eprstmt", root, "dev", {"split": pair})
    assert [e.id for e in train.examples] == [tag * 10, tag * 10 + 1]
    assert [e.id for e in dev.examples] == [500 + tag * 10, 500 + tag * 10 + 1]
    assert train.files[0].endswith(f"eprstmt/train_{pair}.json") and f"read train_{pair}.json" in train.notes
    # test_public and test are the same whichever pair trains
    assert read("fewclue-eprstmt", root, "test_public", {"split": pair}).files[0].endswith("test_public.json")


def test_default_pair_is_few_all_and_others_are_refused(tmp_path: Path) -> None:
    root = _protocol_folder(tmp_path)
    assert read("fewclue-eprstmt", root, "train").files[0].endswith("train_few_all.json")
    with pytest.raises(DataError, match="split='5' is not a FewCLUE train/dev pair"):
        read("fewclue-eprstmt", root, "train", {"split": "5"})
    (root / "eprstmt" / "train_3.json").unlink()
    with pytest.raises(DataError, match=r"needs train_3\.json"):
        read("fewclue-eprstmt", root, "train", {"split": "3"})


def test_data_dir_is_datasets_the_repository_or_the_task_folder(tmp_path: Path) -> None:
    repo = tmp_path / "FewCLUE-main"
    for name in ("fewclue-csl", "fewclue-csldcp"):
        copy_sample(name, repo / "datasets")
    for root in (repo, repo / "datasets", repo / "datasets" / "csl"):
        assert read("fewclue-csl", root, "dev").files[0] == str(repo / "datasets" / "csl" / "dev_few_all.json")
    with pytest.raises(DataError, match="this is FewCLUE's csldcp folder, not csl's"):
        read("fewclue-csl", repo / "datasets" / "csldcp", "dev")
    copy_sample("fewclue-bustm", tmp_path / "other")
    with pytest.raises(DataError, match=r"needs dev_few_all\.json in a folder named csl/"):
        read("fewclue-csl", tmp_path / "other", "dev")


def test_data_dir_through_the_cli_lookup(tmp_path: Path) -> None:
    """The kernel's --data-dir lookup hands a parent folder to the reader, which finds the task's folder."""
    from clue_core.data import resolve_task_data

    copy_sample("fewclue-chid", tmp_path / "datasets")
    root = resolve_task_data(SPECS["fewclue-chid"], data_dir=tmp_path / "datasets")
    assert len(read_split(SPECS["fewclue-chid"], root, "dev").examples) == 5


# --- each task's quirks ---------------------------------------------------------------------

def test_tnews_integer_labels_and_string_test_ids() -> None:
    spec = SPECS["fewclue-tnews"]
    train = read_split(spec, sample_dir(spec), "train")
    assert {e.label for e in train.examples} == set(spec.labels)
    assert any("integer-coded label(s) read as label strings" in note for note in train.notes)
    test = read_split(spec, sample_dir(spec), "test")
    assert [e.id for e in test.examples][:2] == ["0", "1"]


def test_cluewsc_ids_and_marked_spans() -> None:
    spec = SPECS["fewclue-cluewsc"]
    dev = read_split(spec, sample_dir(spec), "dev").examples[0]
    record = raw_records(sample_dir(spec) / "dev_few_all.json")[0]
    assert dev.id == record["idx"] and "id" not in record
    target = record["target"]
    assert f"_{target['span1_text']}_" in dev.text and f"[{target['span2_text']}]" in dev.text
    test_record = raw_records(sample_dir(spec) / "test.json")[0]
    assert read_split(spec, sample_dir(spec), "test").examples[0].id == test_record["id"] and "idx" not in test_record


def test_ocnli_null_annotator_labels_are_read(tmp_path: Path) -> None:
    task = copy_sample("fewclue-ocnli", tmp_path)
    records = raw_records(task / "train_few_all.json")
    records[0].update(label0=None, label1=None, label2=None, label3=None, label4=None)
    records[1].update(label0="neutral")
    write_lines(task / "train_few_all.json", records)
    assert len(read("fewclue-ocnli", task, "train").examples) == len(records)


def test_csldcp_repeated_test_public_ids_are_made_unique() -> None:
    spec = SPECS["fewclue-csldcp"]
    part = read_split(spec, sample_dir(spec), "test_public")
    ids = [e.id for e in part.examples]
    assert len(set(map(str, ids))) == len(ids)
    renamed = [i for i in ids if isinstance(i, str)]
    assert len(renamed) == 1 and "#" in renamed[0]
    assert any("1 id(s) repeated by another record" in note for note in part.notes)


def test_repeated_ids_in_test_json_are_refused(tmp_path: Path) -> None:
    task = copy_sample("fewclue-csldcp", tmp_path)
    records = raw_records(task / "test.json")
    write_lines(task / "test.json", [*records, records[0]])
    with pytest.raises(InputError, match="duplicate id") as caught:
        read("fewclue-csldcp", task, "test")
    assert caught.value.line == len(records) + 1


def test_iflytek_line_separators_inside_strings(tmp_path: Path) -> None:
    task = copy_sample("fewclue-iflytek", tmp_path)
    records = raw_records(task / "dev_few_all.json")
    records[0]["sentence"] = "第一行\u2028第二行"
    write_lines(task / "dev_few_all.json", records)
    assert read("fewclue-iflytek", task, "dev").examples[0].text == "第一行\u2028第二行"


def test_chid_test_json_has_no_answers_and_dev_answers_are_checked(tmp_path: Path) -> None:
    task = copy_sample("fewclue-chid", tmp_path)
    assert all(e.label is None for e in read("fewclue-chid", task, "test").examples)
    records = raw_records(task / "dev_few_all.json")
    records[2]["answer"] = 7
    write_lines(task / "dev_few_all.json", records)
    with pytest.raises(InputError, match="answer index 7 out of range for 7 choices") as caught:
        read("fewclue-chid", task, "dev")
    assert caught.value.line == 3


# --- strictness: one line naming file, line and field -------------------------------------

BROKEN = [
    ("fewclue-eprstmt", "sentence", 5, "sentence"),
    ("fewclue-eprstmt", "label", "Neutral", "label"),
    ("fewclue-csldcp", "content", None, "content"),
    ("fewclue-csldcp", "label", "炼金术", "label"),
    ("fewclue-tnews", "label", [102], "label"),
    ("fewclue-tnews", "keywords", 3, "keywords"),
    ("fewclue-iflytek", "label", 119, "label"),
    ("fewclue-ocnli", "sentence2", ["x"], "sentence2"),
    ("fewclue-ocnli", "label3", 1, "label3"),
    ("fewclue-bustm", "sentence1", {"a": 1}, "sentence1"),
    ("fewclue-bustm", "id", 1.5, "id"),
    ("fewclue-chid", "answer", "2", "answer"),
    ("fewclue-chid", "candidates", [], "candidates"),
    ("fewclue-chid", "content", "没有空白", "content"),
    ("fewclue-chid", "content", "#idiom#两个#idiom#", "content"),
    ("fewclue-csl", "keyword", "水声学", "keyword"),
    ("fewclue-csl", "abst", 7, "abst"),
    ("fewclue-cluewsc", "target", "x", "target"),
    ("fewclue-cluewsc", "target.span1_index", 1000, "target.span1_index"),
    ("fewclue-cluewsc", "target.span2_text", None, "target.span2_text"),
]


@pytest.mark.parametrize(("name", "key", "value", "field"), BROKEN)
def test_a_broken_field_is_one_error_naming_file_line_and_field(tmp_path: Path, name: str, key: str, value,
                                                                field: str) -> None:
    task = copy_sample(name, tmp_path)
    path = task / "dev_few_all.json"
    records = raw_records(path)
    if key.startswith("target."):
        records[1]["target"][key.split(".")[1]] = value
    else:
        records[1][key] = value
    write_lines(path, records)
    with pytest.raises(InputError) as caught:
        read(name, task, "dev")
    error = caught.value
    assert (Path(error.path), error.line, error.field) == (path, 2, field)
    assert str(error).startswith(f"{path}:2") and "\n" not in str(error)


@pytest.mark.parametrize("name", NAMES)
def test_a_missing_field_and_broken_json(tmp_path: Path, name: str) -> None:
    task = copy_sample(name, tmp_path)
    path = task / "train_few_all.json"
    records = raw_records(path)
    text_field = {"fewclue-csldcp": "content", "fewclue-chid": "content", "fewclue-csl": "abst",
                  "fewclue-cluewsc": "text", "fewclue-ocnli": "sentence1", "fewclue-bustm": "sentence1"}
    del records[0][text_field.get(name, "sentence")]
    write_lines(path, records)
    with pytest.raises(InputError, match="missing") as caught:
        read(name, task, "train")
    assert (caught.value.line, caught.value.field) == (1, text_field.get(name, "sentence"))
    path.write_text(json.dumps(records[1], ensure_ascii=False) + "\n{broken\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read(name, task, "train")
    assert caught.value.line == 2 and folder(name) in str(caught.value.path)
