"""Faults a hostile review of issue 18's report fixes provoked: non-finite or contradictory scores in
metrics.json, and the plain summary averaging several models' runs into one group score."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest


@pytest.fixture
def runs(baseline_runs: Path, tmp_path: Path) -> Path:
    """Baseline runs of afqmc and tnews, private to the test."""
    folder = tmp_path / "runs"
    for task in ("afqmc", "tnews"):
        shutil.copytree(baseline_runs / task, folder / task)
    return folder


def _edit(path: Path, change) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data), encoding="utf-8")  # json.dumps writes NaN and Infinity as they are


def _one_line_error(result) -> str:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and result.output.count("\n") == 1, result.output
    return result.output


@pytest.mark.parametrize("output", [False, True], ids=["plain", "html"])
@pytest.mark.parametrize(("change", "field", "says"), [
    (lambda m: m.update(primary=float("nan")), "primary", "got nan"),
    (lambda m: m["dev"].update(accuracy=float("inf")), "dev.accuracy", "got inf"),
    (lambda m: m.update(primary_metric="acc"), "primary_metric", "'acc' is not one of dev's metrics"),
    (lambda m: m.update(primary=90.0), "primary", "90.0, but dev.accuracy is"),
])
def test_scores_that_cannot_be_shown_are_named(run_cli, kernel, runs: Path, tmp_path: Path, change, field, says,
                                               output) -> None:
    metrics = runs / "afqmc" / "metrics.json"
    _edit(metrics, change)
    out = tmp_path / "report"
    message = _one_line_error(run_cli("report", runs, *(["-o", out] if output else []), kernel=kernel))
    assert f"{metrics}: field '{field}'" in message and says in message
    assert not out.exists()


def _as_model(run_dir: Path, model: str, accuracy: float) -> None:
    """Make ``run_dir`` a run of another model with another score."""
    def change(metrics):
        metrics.update(model=model, primary=accuracy)
        metrics["dev"]["accuracy"] = accuracy

    _edit(run_dir / "metrics.json", change)
    _edit(run_dir / "manifest.json", lambda manifest: manifest.update(model=model))


def test_plain_group_scores_never_mix_models(run_cli, kernel, runs: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    shutil.copytree(runs / "afqmc", other / "afqmc")
    _as_model(other / "afqmc", "rival", 90.0)
    baseline = json.loads((runs / "afqmc" / "metrics.json").read_text(encoding="utf-8"))["primary"]
    tnews = json.loads((runs / "tnews" / "metrics.json").read_text(encoding="utf-8"))["primary"]

    result = run_cli("report", runs, other, kernel=kernel)
    assert result.exit_code == 0, result.output
    lines = [line for line in result.output.splitlines() if "CLUE 1.1 classification:" in line]
    assert sorted(lines) == [f"baseline · sample: CLUE 1.1 classification: {(baseline + tnews) / 2:.2f} over "
                             "afqmc, tnews (missing: iflytek, ocnli, cluewsc2020, csl)",
                             "rival · sample: CLUE 1.1 classification: 90.00 over afqmc (missing: tnews, iflytek, "
                             "ocnli, cluewsc2020, csl)"]

    data = json.loads(run_cli("report", runs, other, "--json", kernel=kernel).output)
    assert "groups" not in data  # one group score per row, never one over every run
    scores = {row["label"]: row["groups"]["CLUE 1.1 classification"]["score"] for row in data["rows"]}
    assert scores == {"baseline · sample": pytest.approx((baseline + tnews) / 2), "rival · sample": 90.0}


def test_plain_seeds_of_one_model_are_averaged_as_in_the_html_report(run_cli, kernel, runs: Path,
                                                                     tmp_path: Path) -> None:
    second = tmp_path / "seed-2"
    shutil.copytree(runs / "afqmc", second / "afqmc")
    _as_model(second / "afqmc", "baseline", 10.0)
    _edit(second / "afqmc" / "manifest.json", lambda manifest: manifest.update(seed=7))
    first = json.loads((runs / "afqmc" / "metrics.json").read_text(encoding="utf-8"))["primary"]

    one = json.loads(run_cli("report", runs, second, "--json", kernel=kernel).output)
    assert one["groups"]["CLUE 1.1 classification"]["tasks"] == ["afqmc", "tnews"]
    html = run_cli("report", runs, second, "-o", tmp_path / "out", "--json", kernel=kernel)
    row = json.loads(html.output)["rows"][0]
    assert row["cells"]["afqmc"] == pytest.approx((first + 10.0) / 2)
    assert one["rows"][0]["groups"]["CLUE 1.1 classification"]["score"] == pytest.approx(
        row["groups"]["CLUE 1.1 classification"]["score"])


# -o DIR: a hand-edited report.json, two reports at once, a failed first report


def test_a_hand_edited_report_json_is_not_replaced(run_cli, kernel, runs: Path, tmp_path: Path) -> None:
    out = tmp_path / "report"
    assert run_cli("report", runs, "-o", out, kernel=kernel).exit_code == 0
    assert run_cli("report", runs, "-o", out, kernel=kernel).exit_code == 0  # its own: regenerated
    _edit(out / "report.json", lambda report: report.update(my_note="checked by hand"))
    message = _one_line_error(run_cli("report", runs, "-o", out, kernel=kernel))
    assert f"{out / 'report.json'}: not written by clue-core report (or changed since)" in message
    assert "index.html" not in message and "report.md" not in message
    assert json.loads((out / "report.json").read_text(encoding="utf-8"))["my_note"] == "checked by hand"


def test_a_second_report_into_a_folder_being_written_is_refused(run_cli, kernel, runs: Path,
                                                                tmp_path: Path) -> None:
    fcntl = pytest.importorskip("fcntl")
    out = tmp_path / "report"
    out.mkdir()
    import os

    fd = os.open(out, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # what a first report holds while it writes
        message = _one_line_error(run_cli("report", runs, "-o", out, kernel=kernel))
        assert f"{out}: another clue-core report is writing there" in message
        assert list(out.iterdir()) == []
    finally:
        os.close(fd)
    assert run_cli("report", runs, "-o", out, kernel=kernel).exit_code == 0  # released: written


def test_a_failed_first_report_leaves_no_folder(run_cli, kernel, runs: Path, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    import errno

    from clue_core import atomic

    def full_disk(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(atomic.os, "fsync", full_disk)
    out = tmp_path / "new" / "report"
    message = _one_line_error(run_cli("report", runs, "-o", out, kernel=kernel))
    assert f"cannot write the report: {out / 'index.html'}: No space left on device (the disk is full" in message
    assert not out.exists()
