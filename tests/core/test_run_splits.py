"""``run --splits dev``: a quick dev-only evaluation predicts dev alone (not test, which doubled an
LLM's time on C3), writes no submission files and says so; ``submit`` refuses it in one line, and
``--resume`` keeps it dev-only (other splits on resume are refused)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from clue_builtin.baseline import BaselineLearner
from clue_core import api
from clue_core.config import ArgumentError


def _manifest(run: Path) -> dict[str, Any]:
    return json.loads((run / "manifest.json").read_text(encoding="utf-8"))


def test_splits_dev_predicts_dev_alone_writes_no_submission_and_says_so(run_cli, tmp_path, monkeypatch):
    predicted: list[int] = []
    predict = BaselineLearner.predict
    monkeypatch.setattr(BaselineLearner, "predict", lambda self, ex: predicted.append(len(ex)) or predict(self, ex))
    out = tmp_path / "runs"
    result = run_cli("run", "afqmc", "-m", "baseline", "--sample", "-o", out, "--splits", "dev")
    assert result.exit_code == 0, result.output
    run = out / "afqmc"
    assert predicted == [16]  # dev's 16 examples, and no test
    assert sorted(p.name for p in (run / "predictions").iterdir()) == ["dev.jsonl"]
    assert not (run / "submission").exists()
    manifest = _manifest(run)
    assert manifest["splits"] == ["dev"] and manifest["submission_files"] == [] and manifest["test_versions"] == {}
    assert "[afqmc] dev only (--splits dev): the test split is not predicted, so no submission files are " \
           "written; run without --splits to submit afqmc" in result.stderr
    row = result.stdout.splitlines()[2]
    assert "none: dev only (--splits dev)" in row and "accuracy" in row

    submitted = run_cli("submit", run, "-o", tmp_path / "s.zip")
    assert submitted.exit_code == 2 and submitted.output == (
        f"error: {run}: dev only (--splits dev): the run predicted no test split, so it has no submission "
        f"files; run afqmc again without --splits to submit it\n")
    assert not (tmp_path / "s.zip").exists()


def test_a_full_run_records_every_split_it_predicted(run_cli, tmp_path):
    result = run_cli("run", "afqmc", "-m", "baseline", "--sample", "-o", tmp_path / "runs", "--json")
    assert result.exit_code == 0, result.output
    assert _manifest(tmp_path / "runs" / "afqmc")["splits"] == ["dev", "test"]
    assert json.loads(result.stdout)[0]["splits"] == ["dev", "test"]


def test_splits_dev_leaves_a_scored_split_out_unless_named(run_cli, tmp_path):
    out = tmp_path / "runs"
    result = run_cli("run", "fewclue-eprstmt", "-m", "baseline", "--sample", "-o", out, "--splits", "dev")
    assert result.exit_code == 0, result.output
    metrics = json.loads((out / "fewclue-eprstmt" / "metrics.json").read_text(encoding="utf-8"))
    assert "scored_splits" not in metrics and "test_public" not in metrics["counts"]
    named = run_cli("run", "fewclue-eprstmt", "-m", "baseline", "--sample", "-o", out, "--overwrite",
                    "--splits", "dev,test_public")
    assert named.exit_code == 0, named.output
    run = out / "fewclue-eprstmt"
    metrics = json.loads((run / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["scored_splits"] == ["test_public"]
    assert sorted(p.name for p in (run / "predictions").iterdir()) == ["dev.jsonl", "test_public.jsonl"]
    assert not (run / "submission").exists() and _manifest(run)["splits"] == ["dev", "test_public"]


@pytest.mark.parametrize(("splits", "message"), [
    ("test", "error: --splits test: a run always predicts dev (its scores are dev's); name dev too "
             "(--splits dev,test)"),
    ("dev,tset", "error: --splits: no task of this run predicts a split 'tset' (choose from dev, test; "
                 "'test' is every test version)"),
    ("dev,", "error: --splits 'dev,': an empty split name; name them separated by commas (--splits dev or "
             "--splits dev,test)"),
])
def test_bad_splits_are_one_line_and_write_nothing(run_cli, tmp_path, splits, message):
    result = run_cli("run", "afqmc", "-m", "baseline", "--sample", "-o", tmp_path / "runs", "--splits", splits)
    assert result.exit_code == 2 and result.output == message + "\n"
    assert not (tmp_path / "runs").exists()


def _interrupt_first_fit(monkeypatch) -> None:
    fit = BaselineLearner.fit
    calls = {"n": 0}

    def interrupted(self, train, dev, context):
        calls["n"] += 1
        if calls["n"] == 1:
            raise KeyboardInterrupt
        return fit(self, train, dev, context)

    monkeypatch.setattr(BaselineLearner, "fit", interrupted)


def test_resume_keeps_a_dev_only_run_dev_only_and_refuses_other_splits(run_cli, tmp_path, monkeypatch):
    _interrupt_first_fit(monkeypatch)
    out = tmp_path / "runs"
    stopped = run_cli("run", "afqmc", "-m", "baseline", "--sample", "-o", out, "--splits", "dev")
    assert stopped.exit_code == 130 and (out / ".afqmc.staging").is_dir()
    other = run_cli("run", "afqmc", "-m", "baseline", "--sample", "-o", out, "--resume", "--splits", "dev,test")
    assert other.exit_code == 2 and other.output == (
        f"error: cannot resume {out / '.afqmc.staging'}: it was started with a different --splits "
        f"('dev' → 'dev,test'); use --overwrite to start over\n")
    resumed = run_cli("run", "afqmc", "-m", "baseline", "--sample", "-o", out, "--resume")
    assert resumed.exit_code == 0, resumed.output
    run = out / "afqmc"
    assert _manifest(run)["splits"] == ["dev"] and not (run / "submission").exists()
    assert "none: dev only (--splits dev)" in resumed.stdout
    again = run_cli("run", "afqmc", "-m", "baseline", "--sample", "-o", out, "--resume")  # complete: left as it is
    assert again.exit_code == 0 and "none: dev only (--splits dev)" in again.stdout


def test_dry_run_shows_the_splits_and_no_submission_files(run_cli, tmp_path):
    result = run_cli("run", "afqmc", "-m", "baseline", "--sample", "-o", tmp_path, "--splits", "dev", "--dry-run")
    assert result.exit_code == 0, result.output
    assert "  splits: dev\n  submission files: -\n" in result.stdout


def test_api_run_takes_splits(tmp_path, monkeypatch):
    monkeypatch.setenv("CLUE_HOME", str(tmp_path / "home"))
    records = api.run("afqmc", "baseline", sample=True, output_dir=tmp_path / "runs", splits=["dev"], echo=None)
    assert records[0].manifest.submission_files == [] and records[0].prediction_splits() == ["dev"]
    assert records[0].manifest.splits == ["dev"]
    assert api.plan("afqmc", "baseline", sample=True, splits="dev")[0]["splits"] == ["dev"]
    with pytest.raises(ArgumentError, match=r"^splits: expected a split name or a list of them, got int 3"):
        api.run("afqmc", "baseline", sample=True, output_dir=tmp_path / "other", splits=3, echo=None)
    with pytest.raises(ArgumentError, match=r"^splits item: expected a split name, got int 1"):
        api.run("afqmc", "baseline", sample=True, output_dir=tmp_path / "other", splits=["dev", 1], echo=None)


@pytest.mark.slow
def test_a_task_without_a_test_set_is_not_called_dev_only(run_cli, tmp_path):
    """SuperCLUE has no leaderboard test set: its runs write no submission files, --splits or not."""
    result = run_cli("run", "superclue-close", "-m", "llm-tiny", "--sample", "-o", tmp_path / "runs", "--limit", "2")
    assert result.exit_code == 0, result.output
    assert "dev only" not in result.output
    header, _, row = result.stdout.splitlines()[:3]
    assert re.split(r"\s{2,}", header)[-2:] == ["submission files", "run dir"]
    assert re.split(r"\s{2,}", row)[-2] == "-"
    assert _manifest(tmp_path / "runs" / "superclue-close")["splits"] == ["dev"]


def test_a_run_recorded_before_splits_existed_is_submitted_as_a_full_run(run_cli, tmp_path):
    out = tmp_path / "runs"
    assert run_cli("run", "afqmc", "-m", "baseline", "--sample", "-o", out).exit_code == 0
    path = out / "afqmc" / "manifest.json"
    manifest = _manifest(out / "afqmc")
    del manifest["splits"]
    path.write_text(json.dumps(manifest), encoding="utf-8")
    submitted = run_cli("submit", out, "-o", tmp_path / "s.zip")
    assert submitted.exit_code == 0, submitted.output
    manifest["splits"] = "dev"
    path.write_text(json.dumps(manifest), encoding="utf-8")
    refused = run_cli("submit", out, "-o", tmp_path / "t.zip")
    assert refused.exit_code == 2 and refused.output.startswith(f"error: {path}: field 'splits': expected a list")
