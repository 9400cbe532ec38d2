"""The specs, the leaderboard files in FewCLUE's names and shapes (byte for byte), and runs of
all nine tasks through the CLI: --sample end to end, then ``clue-core submit`` of that run."""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import pytest

from clue_builtin.writers import write_jsonl_labels
from clue_core.examples import ClassificationExample, MultipleChoiceExample, Prediction
from clue_tasks_fewclue.chid import read_answers, write_answers
from tests.fewclue.helpers import NAMES, SPECS, SUBMISSION, raw_records


def test_specs_declare_the_protocol_the_leaderboard_and_the_files() -> None:
    for name, spec in SPECS.items():
        assert spec.scored_splits == ("test_public",) and spec.splits == ("train", "dev")
        assert [(t.split, t.submission_file) for t in spec.test_versions] == [("test", SUBMISSION[name])]
        assert [(lb.benchmark, lb.group) for lb in spec.leaderboards] == [("FewCLUE", "overall")]
        (split,) = spec.reader_settings
        assert (split.name, split.default, split.choices) == ("split", "few_all",
                                                              ("few_all", "0", "1", "2", "3", "4", "all"))
        assert spec.repeat is not None and spec.repeat.each == ("0", "1", "2", "3", "4", "few_all")
        assert spec.repeat.averaged == ("0", "1", "2", "3", "4") and spec.repeat.suffixes == {"few_all": "_all"}
        assert spec.writer == ("fewclue_chid" if name == "fewclue-chid" else "jsonl_labels")
        assert {p.split for p in spec.published} == {"test_public"} and len(spec.published) == 6


def test_label_sets_and_answer_words() -> None:
    assert len(SPECS["fewclue-csldcp"].labels) == 67 and len(SPECS["fewclue-iflytek"].labels) == 119
    assert len(SPECS["fewclue-tnews"].labels) == 15
    for name, spec in SPECS.items():
        if spec.kind != "classification":
            continue
        words = spec.prompt.verbalizers
        assert set(words) == set(spec.labels) and len(set(words.values())) == len(words)
        assert len({len(w) for w in words.values()}) == 1, name  # one mask length per task (PET)
        assert all(len(w) <= 2 for w in words.values())


def test_published_pet_scores_are_matched_on_pair() -> None:
    pet = {p.version: p.value for p in SPECS["fewclue-eprstmt"].published}
    assert pet == {"0": 87.87, "1": 84.92, "2": 86.23, "3": 86.89, "4": 87.38, "few_all": 88.2}
    assert {p.value for p in SPECS["fewclue-chid"].published if p.version == "few_all"} == {62.39}
    assert all(p.mode == "pet" and p.metric == "accuracy" and "pet/readme.md" in p.source
               for spec in SPECS.values() for p in spec.published)


def test_label_file_lines_byte_for_byte(tmp_path: Path) -> None:
    path = tmp_path / "tnewsf_predict.json"
    write_jsonl_labels(path, [ClassificationExample("0", "标题")], [Prediction("0", "101")])
    assert path.read_bytes() == b'{"id": "0", "label": "101"}\n'
    write_jsonl_labels(path, [ClassificationExample(5, "句子")], [Prediction(5, "1")])
    assert path.read_bytes() == b'{"id": 5, "label": "1"}\n'
    write_jsonl_labels(path, [ClassificationExample(0, "摘要")], [Prediction(0, "力学")])
    assert path.read_bytes() == '{"id": 0, "label": "力学"}\n'.encode()


def test_chid_file_byte_for_byte_and_parsed_back(tmp_path: Path) -> None:
    path = tmp_path / "chidf_predict.json"
    example = MultipleChoiceExample(3000, "____", "", tuple("ABCDEFG"))
    write_answers(path, [example], [Prediction(3000, 0)])
    assert path.read_bytes() == b'{"id": 3000, "answer": 0}\n'
    assert read_answers(path) == [(3000, 0)]
    path.write_text('{"id": 0, "answer": "6"}\n', encoding="utf-8")  # the EFL baseline's example shape
    assert read_answers(path) == [(0, 6)]
    path.write_text('{"id": 0, "label": 6}\n', encoding="utf-8")
    with pytest.raises(Exception, match="answer"):
        read_answers(path)


@pytest.mark.slow
def test_all_nine_run_on_the_sample_and_submit(run_cli, tmp_path: Path) -> None:
    out = tmp_path / "runs"
    result = run_cli("run", *NAMES, "--model", "baseline", "--sample", "-o", out)
    assert result.exit_code == 0, result.output
    for name in NAMES:
        metrics = json.loads((out / name / "metrics.json").read_text(encoding="utf-8"))
        assert metrics["leaderboards"] == [{"benchmark": "FewCLUE", "group": "overall"}]
        shown = dict(metrics["report_settings"])
        assert shown.pop("protocol", "clue-core") == "clue-core"  # tasks with OpenCompass presets declare it
        assert shown == {"split": "few_all"}
        assert "accuracy" in metrics["dev"]
        if "test_public" in metrics.get("scored_splits", ()):  # the kernel's scored splits
            assert "accuracy" in metrics["test_public"]
        submission = out / name / "submission" / SUBMISSION[name]
        lines = raw_records(submission)
        test = raw_records(_sample(name) / "test.json")
        assert [line["id"] for line in lines] == [record["id"] for record in test]
    zipped = tmp_path / "fewclue_submit_examples.zip"
    result = run_cli("submit", out, "-o", zipped)
    assert result.exit_code == 0, result.output
    with zipfile.ZipFile(zipped) as archive:
        assert sorted(archive.namelist()) == sorted(SUBMISSION.values())
        first = archive.read("chidf_predict.json").split(b"\n")[0]
        assert first.startswith(b'{"id": 3000, "answer": ') and first.endswith(b"}")
        assert archive.read("tnewsf_predict.json").startswith(b'{"id": "0", "label": "')


def _sample(name: str) -> Path:
    from clue_core.data import sample_dir

    return sample_dir(SPECS[name])


@pytest.mark.slow
def test_the_split_setting_through_the_cli(run_cli, tmp_path: Path) -> None:
    result = run_cli("run", "fewclue-bustm", "--model", "baseline", "--sample", "--set", "split=7", "--dry-run")
    assert result.exit_code == 2 and "split" in result.output
    result = run_cli("run", "fewclue-bustm", "--model", "baseline", "--sample", "--set", "split=3", "--dry-run")
    assert result.exit_code == 0, result.output
    assert "split" in result.output and "3" in result.output


@pytest.mark.slow
def test_the_split_setting_reaches_the_reader_in_a_run(run_cli, tmp_path: Path) -> None:
    task = tmp_path / "datasets" / "bustm"
    shutil.copytree(_sample("fewclue-bustm"), task)
    for kind in ("train", "dev"):
        shutil.copy(task / f"{kind}_few_all.json", task / f"{kind}_3.json")
    out = tmp_path / "runs"
    result = run_cli("run", "fewclue-bustm", "--model", "baseline", "--data-dir", tmp_path / "datasets",
                     "--set", "split=3", "-o", out)
    assert result.exit_code == 0, result.output
    manifest = (out / "fewclue-bustm" / "manifest.json").read_text(encoding="utf-8")
    assert "train_3.json" in manifest and "train_few_all.json" not in manifest
