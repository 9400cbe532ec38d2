"""clue-tasks-mrc end to end through the clue-core CLI, in-process."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import SAMPLES

TASKS = ("cmrc2018", "drcd", "chid", "c3")


def test_list_shows_the_four_tasks_and_the_metric(run_cli):
    rows = {row["name"]: row for row in json.loads(run_cli("list", "tasks", "--json").output)}
    for name in TASKS:
        assert rows[name]["plugin"] == "clue-tasks-mrc"
    reading = [{"benchmark": "CLUE 1.1", "group": "reading comprehension"},
               {"benchmark": "CLUE 1.0", "group": "reading comprehension"}]
    assert [rows[n]["leaderboards"] for n in TASKS] == [reading, [], reading, reading]
    assert rows["cmrc2018"]["primary_metric"] == "em"
    assert "cmrc2018" in run_cli("list", "metrics").output


def test_hooks_import_nothing_heavy():
    code = (
        "import sys, clue_tasks_mrc.hooks as h; h.clue_tasks(); h.clue_metrics(); "
        "heavy = [m for m in ('nltk', 'torch', 'transformers', 'numpy') if m in sys.modules]; "
        "assert not heavy, heavy"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.fixture(scope="module")
def sample_runs(tmp_path_factory) -> Path:
    """One baseline run per task on its bundled sample (module-wide: runs take a moment)."""
    from click.testing import CliRunner

    from clue_core.cli import cli

    out = tmp_path_factory.mktemp("runs")
    for task in TASKS:
        result = CliRunner().invoke(cli, ["run", task, "--model", "baseline", "--sample", "-o", str(out)])
        assert result.exit_code == 0, result.output
    return out


def _lines(path: Path) -> list:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_cmrc_and_drcd_submissions_cover_every_test_question(sample_runs):
    for task, name in (("cmrc2018", "cmrc2018_predict.json"), ("drcd", "drcd_predict.json")):
        submission = json.loads((sample_runs / task / "submission" / name).read_text(encoding="utf-8"))
        test = json.loads((SAMPLES / task / "test.json").read_text(encoding="utf-8"))
        ids = [qa["id"] for article in test["data"] for p in article["paragraphs"] for qa in p["qas"]]
        assert list(submission) == ids
        contexts = [p["context"] for article in test["data"] for p in article["paragraphs"]]
        assert all(any(answer in context for context in contexts) for answer in submission.values())
    metrics = json.loads((sample_runs / "cmrc2018" / "metrics.json").read_text(encoding="utf-8"))
    assert set(metrics["dev"]) == {"em", "f1", "average"} and metrics["primary_metric"] == "em"


def test_chid_submissions_key_every_blank_tag(sample_runs):
    for version, name in (("1.1", "chid11_predict.json"), ("1.0", "chid10_predict.json")):
        submission = json.loads((sample_runs / "chid" / "submission" / name).read_text(encoding="utf-8"))
        lines = _lines(SAMPLES / "chid" / f"test{version}.json")
        tags = [tag for line in lines for passage in line["content"] for tag in re.findall(r"#idiom\d{6}#", passage)]
        assert tags and sorted(submission) == sorted(tags)
        assert all(isinstance(v, int) and 0 <= v < 10 for v in submission.values())


def test_c3_submissions_follow_test_file_order(sample_runs):
    for version, name in (("1.1", "c311_predict.json"), ("1.0", "c310_predict.json")):
        rows = _lines(sample_runs / "c3" / "submission" / name)
        test = json.loads((SAMPLES / "c3" / f"test{version}.json").read_text(encoding="utf-8"))
        questions = [q for document in test for q in document[1]]
        assert [row["id"] for row in rows] == [q["id"] for q in questions]
        assert all(0 <= row["label"] < len(q["choice"]) for row, q in zip(rows, questions))


def test_evaluate_cmrc_worked_example(run_cli, tmp_path):
    predictions = {
        "DEV_0_QUERY_0": "约58平方公里",  # F1 max(10/11, 10/13) = 10/11, EM 0
        "DEV_0_QUERY_1": "白鹭栖息的地方。",  # punctuation removed: EM 1, F1 1
        "DEV_0_QUERY_2": "2012",  # third gold answer: EM 1, F1 1
        # DEV_1_QUERY_0 missing: 0
        "DEV_1_QUERY_1": "山川志",  # 《山川志》 without its marks: EM 1, F1 1
        "DEV_1_QUERY_2": "秋季",  # vs 秋天: LCS 1 of 2 and 2 -> F1 0.5, EM 0
    }
    path = tmp_path / "predictions.json"
    path.write_text(json.dumps(predictions, ensure_ascii=False), encoding="utf-8")
    result = run_cli("evaluate", "cmrc2018", path, "--sample", "--allow-missing", "--json")
    assert result.exit_code == 0, result.output
    scores = json.loads(result.output)
    f1 = 100 * (10 / 11 + 1 + 1 + 0 + 1 + 0.5) / 6
    assert scores["em"] == pytest.approx(50.0)
    assert scores["f1"] == pytest.approx(f1)
    assert scores["average"] == pytest.approx((50.0 + f1) / 2)
    table = run_cli("evaluate", "cmrc2018", path, "--sample", "--allow-missing").output
    assert "50.000" in table and f"{f1:.3f}" in table and f"{(50 + f1) / 2:.3f}" in table


def test_dev_answers_without_offset_run_and_are_noted(run_cli, tmp_path):
    """The official dev set's answer_start -1 answers no longer stop a run: noted, scored by text."""
    from .test_mrc_squad import UNPLACED_DEV

    data = tmp_path / "cmrc"
    shutil.copytree(SAMPLES / "cmrc2018", data)
    (data / "dev.json").write_text(json.dumps(UNPLACED_DEV, ensure_ascii=False), encoding="utf-8")
    result = run_cli("run", "cmrc2018", "--model", "baseline", "--data-dir", data, "-o", tmp_path / "runs")
    assert result.exit_code == 0, result.output
    assert "[cmrc2018] dev: dev.json: 3 gold answer(s) with answer_start -1 in 2 question(s)" in result.output
    manifest = json.loads((tmp_path / "runs" / "cmrc2018" / "manifest.json").read_text(encoding="utf-8"))
    assert any("answer_start -1" in note for note in manifest["notes"])
    records = _lines(tmp_path / "runs" / "cmrc2018" / "predictions" / "dev.jsonl")
    assert records[1]["gold"] == ["约40米", "四十米", "大约四十米"]
    # scored against the texts of answers without an offset: the second question matches one exactly
    predictions = tmp_path / "predictions.json"
    predictions.write_text(json.dumps({"DEV_9_QUERY_0": "1736年", "DEV_9_QUERY_1": "约40米"}, ensure_ascii=False),
                           encoding="utf-8")
    scores = json.loads(run_cli("evaluate", "cmrc2018", predictions, "--data-dir", data, "--json").output)
    assert scores["em"] == 100.0 and scores["f1"] == 100.0


def test_chid_decode_is_a_declared_decode_setting(run_cli, tmp_path):
    info = run_cli("info", "chid").output
    assert "chid_decode (str, default 'exact')" in info
    result = run_cli("run", "chid", "--model", "baseline", "--sample", "--set", "chid_decode=greedy",
                     "-o", tmp_path / "greedy")
    assert result.exit_code == 0, result.output
    manifest = json.loads((tmp_path / "greedy" / "chid" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["settings"]["chid_decode"] == "greedy" and manifest["setting_sources"]["chid_decode"] == "--set"
    bad = run_cli("run", "chid", "--model", "baseline", "--sample", "--set", "chid_decode=beam", "-o", tmp_path / "x")
    assert bad.exit_code == 2 and "chid_decode" in bad.output and "'exact', 'greedy'" in bad.output
    assert not (tmp_path / "x" / "chid").exists()


def test_bad_offset_fails_cleanly_and_writes_nothing(run_cli, tmp_path):
    data = tmp_path / "cmrc"
    shutil.copytree(SAMPLES / "cmrc2018", data)
    dev = json.loads((data / "dev.json").read_text(encoding="utf-8"))
    dev["data"][0]["paragraphs"][0]["qas"][1]["answers"][0]["answer_start"] += 40  # far off: not a small shift
    (data / "dev.json").write_text(json.dumps(dev, ensure_ascii=False), encoding="utf-8")
    result = run_cli("run", "cmrc2018", "--model", "baseline", "--data-dir", data, "-o", tmp_path / "runs")
    assert result.exit_code == 2
    error_lines = [line for line in result.output.splitlines() if line.startswith("error: ")]
    assert len(error_lines) == 1 and "DEV_0_QUERY_1" in error_lines[0] and "dev.json" in error_lines[0]
    assert "Traceback" not in result.output
    assert not (tmp_path / "runs" / "cmrc2018" / "submission").exists()
