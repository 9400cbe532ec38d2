"""End to end through ``clue-core``: sample runs of every task, their submission files, submit,
bad input as one error line, and the download path against a local server."""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import shutil
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from clue_core.cli import cli
from clue_core.data import sample_dir
from clue_core.hookspecs import hookimpl
from clue_core.specs import DataSource, TaskSpec
from clue_data import download
from clue_tasks_classic.catalog import TASKS, task
from tests.classic.helpers import TASK_NAMES, raw_records, sample_file
from tests.support.local_http import LocalServer

ALL_SUBMISSION_FILES = sorted(t.submission_file for spec in TASKS for t in spec.test_versions)


@pytest.fixture(scope="module")
def sample_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One ``clue-core run <all classic tasks> --model baseline --sample`` shared by the tests below."""
    root = tmp_path_factory.mktemp("classic-runs")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CLUE_HOME", str(root / "home"))
        patch.delenv("CLUE_DATA_URL", raising=False)
        trainable = [name for name in TASK_NAMES if name != "diagnostics"]
        result = CliRunner().invoke(cli, ["run", *trainable, "--model", "baseline", "--sample",
                                          "--output-dir", str(root / "runs")], catch_exceptions=False)
        assert result.exit_code == 0, result.output
        # diagnostics has no training data: the official setup predicts it with an NLI model
        result = CliRunner().invoke(cli, ["run", "diagnostics", "--model", str(root / "runs" / "ocnli" / "model"),
                                          "--no-train", "--sample", "--output-dir", str(root / "runs")],
                                    catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return root / "runs"


@pytest.mark.parametrize("name", TASK_NAMES)
def test_sample_run_writes_every_submission_file_line_by_line(sample_runs: Path, name: str) -> None:
    spec = task(name)
    run_dir = sample_runs / name
    manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["status"] == "complete"
    assert sorted(manifest["submission_files"]) == sorted(t.submission_file for t in spec.test_versions)
    for version in spec.test_versions:
        test_records = raw_records(sample_file(spec, version.split))
        lines = (run_dir / "submission" / version.submission_file).read_text(encoding="utf-8").splitlines()
        assert len(lines) == len(test_records)
        id_field = "index" if name == "diagnostics" else "id"
        for line, record in zip(lines, test_records):
            entry = json.loads(line)
            assert list(entry) == ["id", "label"]
            assert entry["id"] == record[id_field] and type(entry["id"]) is type(record[id_field])
            assert isinstance(entry["label"], str) and entry["label"] in spec.labels
    metrics = json.loads((run_dir / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["leaderboards"] == [lb.as_dict() for lb in spec.leaderboards]
    if spec.splits:
        assert 0.0 <= metrics["dev"]["accuracy"] <= 100.0


def test_the_majority_baseline_scores_what_the_dev_labels_say(sample_runs: Path) -> None:
    spec = task("afqmc")
    train = [r["label"] for r in raw_records(sample_file(spec, "train"))]
    dev = [r["label"] for r in raw_records(sample_file(spec, "dev"))]
    majority = max(set(train), key=train.count)
    metrics = json.loads((sample_runs / "afqmc" / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["dev"]["accuracy"] == pytest.approx(100.0 * dev.count(majority) / len(dev))


def test_submit_accepts_all_sample_runs(sample_runs: Path, run_cli, tmp_path: Path) -> None:
    target = tmp_path / "submit_team_20240101.zip"
    result = run_cli("submit", *sorted(sample_runs.iterdir()), "-o", target)
    assert result.exit_code == 0, result.output
    with zipfile.ZipFile(target) as archive:
        assert sorted(archive.namelist()) == ALL_SUBMISSION_FILES


@pytest.mark.parametrize(
    ("name", "split", "line", "patch", "expect"),
    [
        ("afqmc", "dev", 3, {"label": "2"}, "field 'label': unknown label '2'"),
        ("tnews", "test1.0", 2, {"sentence": None}, "field 'sentence': missing"),
        ("cluewsc2020", "train", 4, {"target.span1_index": 1}, "field 'target.span1_index': span1_text"),
        ("tnews", "dev", 3, {"label": 105}, "field 'label': unknown label '105'"),
        ("afqmc", "test", 3, {"id": 1}, "field 'id': duplicate id 1 (also at "),
        ("cluewsc2020", "test1.0", 5, {"id": 2}, "field 'id': duplicate id 2 (also at "),
    ],
    ids=["unknown-label", "missing-field-in-a-test-file", "span-offset", "unknown-integer-label",
         "duplicate-test-id", "duplicate-test-id-1.0"],
)
def test_bad_input_is_one_error_line_and_nothing_written(
    run_cli, tmp_path: Path, name: str, split: str, line: int, patch: dict, expect: str
) -> None:
    spec = task(name)
    root = shutil.copytree(sample_dir(spec), tmp_path / name)
    path = root / sample_file(spec, split).relative_to(sample_dir(spec))
    records = raw_records(path)
    record = records[line - 1]
    for key, value in patch.items():
        holder, _, leaf = key.rpartition(".")
        target = record[holder] if holder else record
        if value is None:
            del target[leaf]
        else:
            target[leaf] = value
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")

    out = tmp_path / "runs"
    result = run_cli("run", name, "--model", "baseline", "--data-dir", root, "--output-dir", out)
    assert result.exit_code == 2
    assert "Traceback" not in result.output
    errors = [text for text in result.stderr.splitlines() if text.startswith("error:")]
    assert errors == [result.stderr.splitlines()[-1]]  # one line, the last word
    assert errors[0].startswith(f"error: {path}:{line}") and expect in errors[0]
    assert not out.exists() or not [p for p in out.rglob("*") if p.is_file()]


def _zip_of(folder: Path, wrapper: str) -> bytes:
    """An archive of ``folder`` as downloads look: a wrapper folder plus macOS junk."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                relative = path.relative_to(folder).as_posix()
                archive.write(path, f"{wrapper}/{relative}")
                archive.writestr(f"__MACOSX/{wrapper}/._{path.name}", b"\x00\x05\x16\x07junk")
        archive.writestr(f"{wrapper}/.DS_Store", b"\x00\x00\x00\x01Bud1")
    return buffer.getvalue()


@pytest.mark.parametrize("name", ["tnews", "cmnli"])
def test_download_then_run_against_a_local_server(
    run_cli, isolated_kernel, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    official = task(name)
    archive = _zip_of(sample_dir(official), "dummy_data")
    served = dataclasses.replace(official, source=DataSource(
        url="https://example.invalid/" + official.source.filename, filename=official.source.filename,
        size=len(archive), sha256=hashlib.sha256(archive).hexdigest()))

    class ServedTasks:
        @hookimpl
        def clue_tasks(self) -> list[TaskSpec]:
            return [served]

    isolated_kernel.register(ServedTasks(), "classic-served")
    monkeypatch.setattr(download, "BACKOFF_SECONDS", 0.0)
    with LocalServer({official.source.filename: archive}) as server:
        monkeypatch.setenv("CLUE_DATA_URL", server.url)
        result = run_cli("run", name, "--model", "baseline", "--output-dir", tmp_path / "runs", kernel=isolated_kernel)
        requested = [r.path for r in server.requests]

    assert result.exit_code == 0, result.output
    assert requested == [official.source.filename]
    for version in official.test_versions:
        lines = (tmp_path / "runs" / name / "submission" / version.submission_file).read_text(encoding="utf-8")
        assert len(lines.splitlines()) == len(raw_records(sample_file(official, version.split)))
    manifest = json.loads((tmp_path / "runs" / name / "manifest.json").read_text(encoding="utf-8"))
    assert not [f for f in manifest["data"]["files"] if "MACOSX" in f or f.endswith(".DS_Store")]


def test_diagnostics_is_refused_without_a_trained_model(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["run", "afqmc", "diagnostics", "--model", "baseline", "--sample",
                                      "--output-dir", str(tmp_path)])
    assert result.exit_code == 2
    assert "diagnostics has no training data" in result.output
    assert not any(tmp_path.iterdir())  # refused before afqmc ran
