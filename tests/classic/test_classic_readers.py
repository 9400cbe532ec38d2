"""The readers against our samples, the real official records, and broken input.

``read`` calls a reader alone, as the kernel's ``read_split`` does before its checks;
``read_checked`` goes through ``read_split``, which also checks the split name, labels
and unique test ids (naming the line through ``SplitData.where``).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from clue_core.data import sample_dir
from clue_core.errors import ClueError, DataError, InputError
from clue_core.examples import ClassificationExample
from clue_core.reading import read_split
from clue_core.specs import resolve
from clue_tasks_classic.catalog import task
from clue_tasks_classic.wsc import mark_spans
from tests.classic.helpers import SPLITS, TASK_NAMES, extract_real, needs_real_samples, raw_records, sample_file

ID_FIELD = {"diagnostics": "index"}


def read(name: str, root: Path, split: str):
    return resolve(task(name).reader)(task(name), root, split)


def read_checked(name: str, root: Path, split: str):
    return read_split(task(name), root, split)


def expected_id(name: str, split: str, record: dict, index: int):
    """The id a reader must give: the file's own (CLUEWSC: idx or id) else the line index."""
    for key in (ID_FIELD.get(name, "id"), "idx"):
        if key in record and (name == "cluewsc2020" or key != "idx"):
            return record[key]
    return index


def check_against_raw(name: str, split: str, examples, records: list[dict]) -> None:
    """Every example matches its raw record: id, label, and the input the baselines build."""
    spec = task(name)
    labelled = split in spec.splits
    kept = [(i, r) for i, r in enumerate(records) if not (labelled and r.get("label") == "-")]
    assert len(examples) == len(kept)
    for example, (index, record) in zip(examples, kept):
        assert isinstance(example, ClassificationExample)
        assert example.id == expected_id(name, split, record, index)
        assert example.label == (str(record["label"]) if labelled else None)
        if labelled:
            assert example.label in spec.labels
        if name in ("afqmc", "ocnli", "cmnli"):
            assert (example.text, example.text_pair) == (record["sentence1"], record["sentence2"])
        elif name == "diagnostics":
            assert (example.text, example.text_pair) == (record["premise"], record["hypothesis"])
        elif name in ("tnews", "iflytek"):
            assert (example.text, example.text_pair) == (record["sentence"], None)
        elif name == "csl":
            assert (example.text, example.text_pair) == (" ".join(record["keyword"]), record["abst"])
        else:
            target, text = record["target"], record["text"]
            noun, pronoun = target["span1_text"], target["span2_text"]
            assert example.text.replace("_", "").replace("[", "").replace("]", "") == text
            assert f"_{noun}_" in example.text and f"[{pronoun}]" in example.text
            assert len(example.text) == len(text) + 4


@pytest.mark.parametrize(("name", "split"), SPLITS, ids=[f"{n}-{s}" for n, s in SPLITS])
def test_reader_on_the_bundled_sample(name: str, split: str) -> None:
    spec = task(name)
    result = read_checked(name, sample_dir(spec), split)
    path = sample_file(spec, split)
    records = raw_records(path)
    check_against_raw(name, split, result.examples, records)
    assert len(result) >= 10
    assert result.files[0] == str(path)
    assert result.files[1:] == ((str(sample_dir(spec) / "labels.json"),) if name in ("tnews", "iflytek") else ())
    # where each example came from: the file and its line (1-based), skipping dropped '-' lines
    lines = [number for number, record in enumerate(records, start=1)
             if not (split in spec.splits and record.get("label") == "-")]
    assert result.where == tuple(f"{path}:{number}" for number in lines)
    if split in spec.splits:
        assert len({e.label for e in result.examples}) >= min(3, len(spec.labels))  # varied labels


def test_samples_cover_every_split_and_test_version(spec) -> None:
    for split in (*spec.splits, *(t.split for t in spec.test_versions)):
        assert sample_file(spec, split).is_file()
    ids = [e.id for t in spec.test_versions for e in read(spec.name, sample_dir(spec), t.split).examples]
    assert ids, spec.name


def test_no_majority_lines_are_dropped_and_counted() -> None:
    for name in ("ocnli", "cmnli"):
        spec = task(name)
        for split in spec.splits:
            dashes = sum(r.get("label") == "-" for r in raw_records(sample_file(spec, split)))
            assert dashes > 0
            result = read(name, sample_dir(spec), split)
            assert any(f"dropped {dashes} line(s) labelled '-'" in note for note in result.notes)
    test = read("ocnli", sample_dir(task("ocnli")), "test")
    assert test.notes == ()


def test_labels_json_is_checked_and_recorded_but_optional(tmp_path: Path) -> None:
    tnews = read("tnews", sample_dir(task("tnews")), "dev")
    assert tnews.files[-1].endswith("labels.json")
    assert not hasattr(tnews, "label_descriptions")  # descriptions live in the spec only
    assert task("tnews").label_descriptions["100"] == "news_story"
    root = shutil.copytree(sample_dir(task("iflytek")), tmp_path / "iflytek")
    (root / "labels.json").write_text('{"label": 0, "label_des": "网约车"}\n', encoding="utf-8")
    assert read("iflytek", root, "dev").files[-1] == str(root / "labels.json")  # other texts, known label: fine
    (root / "labels.json").unlink()
    without = read("iflytek", root, "dev")
    assert without.files == (str(root / "dev.json"),)
    assert task("iflytek").label_descriptions["0"] == "打车"


@needs_real_samples
@pytest.mark.parametrize("name", TASK_NAMES)
def test_reader_on_the_real_official_records(name: str, tmp_path: Path) -> None:
    """The real zips nest the files in dummy_data/ and carry __MACOSX/ and .DS_Store junk."""
    root = extract_real(name, tmp_path)
    spec = task(name)
    seen = 0
    for split in (*spec.splits, *(t.split for t in spec.test_versions)):
        try:
            result = read_checked(name, root, split)
        except DataError:
            assert split == "test1.0", f"{name} {split} should be present in the real sample"
            continue
        [path] = [Path(f) for f in result.files if not f.endswith("labels.json")]
        assert "__MACOSX" not in path.parts
        check_against_raw(name, split, result.examples, raw_records(path))
        seen += 1
    assert seen == len(spec.splits) + 1


def test_junk_and_nesting_are_ignored(tmp_path: Path) -> None:
    nested = tmp_path / "dummy_data" / "cmnli_public"
    shutil.copytree(sample_dir(task("cmnli")) / "cmnli_public", nested)
    (tmp_path / "__MACOSX" / "dummy_data").mkdir(parents=True)
    (tmp_path / "__MACOSX" / "dev.json").write_bytes(b"\x00\x05 not json")
    (nested / "._dev.json").write_bytes(b"\x00\x05 resource fork")
    (nested / ".DS_Store").write_bytes(b"\x00")
    result = read("cmnli", tmp_path, "dev")
    assert result.files == (str(nested / "dev.json"),)


def test_ocnli_train_accepts_the_repository_file_name(tmp_path: Path) -> None:
    root = shutil.copytree(sample_dir(task("ocnli")), tmp_path / "ocnli")
    (root / "train.50k.json").rename(root / "train.json")
    assert read("ocnli", root, "train").files == (str(root / "train.json"),)


def test_integer_coded_labels_are_read_as_label_strings(tmp_path: Path) -> None:
    (tmp_path / "dev.json").write_text(
        '{"sentence1": "a", "sentence2": "b", "label": 1}\n{"sentence1": "c", "sentence2": "d", "label": "0"}\n',
        encoding="utf-8")
    result = read("afqmc", tmp_path, "dev")
    assert [e.label for e in result.examples] == ["1", "0"]
    assert any("1 integer-coded label" in note for note in result.notes)


def test_a_missing_file_is_a_data_error_and_the_kernel_checks_the_split_name(tmp_path: Path) -> None:
    with pytest.raises(DataError, match=r"task tnews split 'test1.0' needs test1.0.json"):
        read_checked("tnews", tmp_path, "test1.0")
    with pytest.raises(ClueError, match=r"task diagnostics has no split 'train' \(has: test\)"):
        read_checked("diagnostics", tmp_path, "train")


AFQMC_OK = '{"sentence1": "花呗", "sentence2": "借呗", "label": "0"}'
WSC_TARGET = {"span1_index": 0, "span1_text": "小明", "span2_index": 6, "span2_text": "他"}


def wsc_line(**changes) -> str:
    return json.dumps({"target": {**WSC_TARGET, **changes}, "idx": 7, "label": "true", "text": "小明很高兴，他赢了。"},
                      ensure_ascii=False)


BAD_INPUT = {
    "malformed-json": ("afqmc", '{"sentence1": "花呗", "sentence2": ', None, "invalid JSON"),
    "missing-field": ("afqmc", '{"sentence1": "花呗", "label": "0"}', "sentence2", "missing"),
    "wrong-type": ("afqmc", '{"sentence1": "花呗", "sentence2": 3, "label": "0"}', "sentence2", "expected a string"),
    # labels are checked by the kernel, after the reader turned integer codes into strings
    "unknown-label": ("afqmc", '{"sentence1": "花呗", "sentence2": "借呗", "label": "2"}', "label",
                      "unknown label '2'"),
    "unknown-int-label": ("tnews", '{"label": 105, "sentence": "标题"}', "label", "unknown label '105'"),
    "nli-label-as-index": ("ocnli", '{"sentence1": "a", "sentence2": "b", "label": 0, "id": 1}', "label",
                           "unknown label '0'"),
    "bool-label": ("afqmc", '{"sentence1": "花呗", "sentence2": "借呗", "label": true}', "label", "got bool"),
    "bool-id": ("csl", '{"id": true, "abst": "a", "keyword": ["k"], "label": "1"}', "id", "got bool"),
    "keyword-not-string": ("csl", '{"id": 3, "abst": "a", "keyword": ["k", 5], "label": "1"}', "keyword",
                           "item 1 is int"),
    "wsc-offset": ("cluewsc2020", wsc_line(span2_index=5), "target.span2_index",
                   "span2_text '他' is not at offset 5 (the text there is '，')"),
    "wsc-offset-past-end": ("cluewsc2020", wsc_line(span1_index=40), "target.span1_index", "not at offset 40"),
    "wsc-index-type": ("cluewsc2020", wsc_line(span1_index="0"), "target.span1_index", "expected an integer"),
}


@pytest.mark.parametrize(("name", "bad", "field", "message"), BAD_INPUT.values(), ids=list(BAD_INPUT))
def test_bad_input_names_file_line_and_field(name, bad, field, message, tmp_path: Path) -> None:
    good = AFQMC_OK if name == "afqmc" else None
    lines = [line for line in (good, good, bad) if line is not None]
    path = tmp_path / "dev.json"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_checked(name, tmp_path, "dev")
    error = caught.value
    assert (error.path, error.line, error.field) == (str(path), len(lines), field)
    assert message in str(error)
    assert str(error).startswith(f"{path}:{len(lines)}")
    if name == "cluewsc2020" and "offset" in message:
        assert error.record == "id 7"


def test_the_reader_leaves_label_checks_to_the_kernel(tmp_path: Path) -> None:
    (tmp_path / "dev.json").write_text('{"label": 105, "sentence": "标题"}\n', encoding="utf-8")
    assert [e.label for e in read("tnews", tmp_path, "dev").examples] == ["105"]
    with pytest.raises(InputError, match="unknown label '105'"):
        read_checked("tnews", tmp_path, "dev")


def test_duplicate_ids_in_a_test_file_are_refused_naming_file_and_line(tmp_path: Path) -> None:
    """The zip once held id 2 twice and no id 3: a test file with a repeated id is refused when read."""
    records = [{"id": i, "sentence1": f"问{i}", "sentence2": f"答{i}"} for i in range(5)]
    records[3]["id"] = 2
    path = tmp_path / "test.json"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    assert [e.id for e in read("afqmc", tmp_path, "test").examples] == [0, 1, 2, 2, 4]
    with pytest.raises(InputError) as caught:
        read_checked("afqmc", tmp_path, "test")
    assert (caught.value.path, caught.value.line, caught.value.field) == (str(path), 4, "id")
    assert f"duplicate id 2 (also at {path}:3)" in str(caught.value)


def test_labelled_splits_may_repeat_ids(tmp_path: Path) -> None:
    """Only test files are scored by id, so only they must have unique ids (a kernel rule)."""
    line = '{"id": 1, "sentence1": "a", "sentence2": "b", "label": "entailment"}\n'
    (tmp_path / "dev.json").write_text(line * 2, encoding="utf-8")
    assert [e.id for e in read_checked("ocnli", tmp_path, "dev").examples] == [1, 1]


def test_empty_file_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "test.json").write_text("\n", encoding="utf-8")
    with pytest.raises(InputError, match="contains no records"):
        read("iflytek", tmp_path, "test")


def test_unknown_label_in_labels_json(tmp_path: Path) -> None:
    root = shutil.copytree(sample_dir(task("tnews")), tmp_path / "tnews")
    (root / "labels.json").write_text('{"label": "100", "label_desc": "news_story"}\n'
                                      '{"label": "105", "label_desc": "news_x"}\n', encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read("tnews", root, "dev")
    assert (caught.value.path, caught.value.line, caught.value.field) == (str(root / "labels.json"), 2, "label")
    assert "unknown label '105'" in str(caught.value)


def test_mark_spans_wraps_noun_and_pronoun_in_either_order() -> None:
    assert mark_spans("小明很高兴，他赢了。", noun=("小明", 0), pronoun=("他", 6)) == "_小明_很高兴，[他]赢了。"
    assert mark_spans("他说小明赢了。", noun=("小明", 2), pronoun=("他", 0)) == "[他]说_小明_赢了。"


def test_mark_spans_refuses_overlap_and_empty_spans() -> None:
    with pytest.raises(InputError, match="overlap"):
        mark_spans("他们都来了", noun=("他们", 0), pronoun=("他", 0))
    with pytest.raises(InputError, match="empty span"):
        mark_spans("他来了", noun=("", 0), pronoun=("他", 0))
