"""``clue-core report SWEEPDIR`` reports a sweep folder (``DIR/<trial id>/<task>/`` and ``DIR/summary.json``):
each configuration a row, its seeds averaged, the one summary.json chose per task marked. It said
"no metrics.json here or in its sub-folders" (issue: report on a sweep folder). The sweep is a real
one: ``clue-core sweep`` of hf-tiny, 2 tasks × 2 learning rates × 2 seeds."""

from __future__ import annotations

import json
import shutil
import statistics
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from clue_core.cli import cli

RATES = (0.001, 0.005)
SWEEP = """tasks = ["afqmc", "tnews"]
models = ["hf-tiny"]
seeds = [1, 2]
sample = true
[settings]
progress = false
max_steps = 2
max_length = 32
tiny_hidden_size = 32
tiny_num_layers = 1
tiny_intermediate_size = 64
tiny_num_heads = 2
[grid]
learning_rate = [0.001, 0.005]
"""


@pytest.fixture(scope="module")
def real_sweep(kernel, tmp_path_factory: pytest.TempPathFactory) -> Path:
    if "hf-tiny" not in kernel.models or "sweep" not in kernel.commands:
        pytest.skip("clue-models-hf or clue-sweep is not installed")
    root = tmp_path_factory.mktemp("sweep")
    (root / "sweep.toml").write_text(SWEEP, encoding="utf-8")
    result = CliRunner().invoke(cli, ["sweep", str(root / "sweep.toml"), "-o", str(root / "out"), "--workers", "0"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return root / "out"


@pytest.fixture
def sweep(real_sweep: Path, tmp_path: Path) -> Path:
    """A private copy of the sweep folder, to damage."""
    return Path(shutil.copytree(real_sweep, tmp_path / "sweep"))


def _summary(folder: Path) -> dict[str, Any]:
    return json.loads((folder / "summary.json").read_text(encoding="utf-8"))


def _edit_summary(folder: Path, change) -> None:
    data = _summary(folder)
    change(data)
    (folder / "summary.json").write_text(json.dumps(data), encoding="utf-8")


def _one_line_error(result) -> str:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and result.output.count("\n") == 1, result.output
    return result.output


def test_each_configuration_is_a_row_and_the_best_is_marked(run_cli, sweep: Path, tmp_path: Path) -> None:
    out = tmp_path / "report"
    result = run_cli("report", sweep, "-o", out)
    assert result.exit_code == 0, result.output
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    summary = _summary(sweep)
    assert len(report["runs"]) == 8 and all(run["in_table"] for run in report["runs"])
    rows = {row["label"]: row for row in report["rows"]}
    assert set(rows) == {f"hf-tiny · sample · learning_rate={rate}" for rate in RATES}
    for config in summary["configs"]:
        row = rows[f"hf-tiny · sample · learning_rate={config['config']['learning_rate']}"]
        cell = row["cells"][config["task"]]
        runs = [next(r for r in report["runs"] if r["id"] == run_id) for run_id in cell["runs"]]
        assert sorted(r["path"] for r in runs) == sorted(str(sweep / run) for run in config["runs"])
        assert cell["seeds"] == [1, 2] and cell["value"] == pytest.approx(config["mean"])
        assert cell["value"] == pytest.approx(statistics.fmean(r["primary"] for r in runs))
        best = summary["best"][config["task"]]["runs"] == config["runs"]
        assert cell.get("sweep_best", False) is best
        assert all(r["sweep"] == {"folder": str(sweep), "trial": Path(r["path"]).parent.name,
                                  "settings": config["config"], "best": best} for r in runs)
    assert sum(cell.get("sweep_best", False) for row in rows.values() for cell in row["cells"].values()) == 2
    assert not [w for w in report["warnings"] if "other settings" in w]  # nothing folded into one row
    page = (out / "index.html").read_text(encoding="utf-8")
    markdown = (out / "report.md").read_text(encoding="utf-8")
    assert page.count("<small>★ sweep&#x27;s best</small>") == 2 and markdown.count("★ sweep's best") == 2 + 1
    legend = "★ sweep's best marks the configuration the sweep's summary.json chose for the task"
    assert legend in markdown and legend.replace("'", "&#x27;") in page


def test_the_terminal_summary_reads_it_too(run_cli, sweep: Path) -> None:
    result = run_cli("report", sweep)
    assert result.exit_code == 0, result.output
    for rate in RATES:
        assert f"hf-tiny · sample · learning_rate={rate}: CLUE 1.1 classification:" in result.output
    data = json.loads(run_cli("report", sweep, "--json").output)
    assert len(data["tasks"]) == 8 and len(data["rows"]) == 2 and data["unfinished"] == []


def test_failed_interrupted_and_pending_trials_are_named(run_cli, sweep: Path, tmp_path: Path) -> None:
    trials = _summary(sweep)["trials"]
    failed, interrupted, pending = trials[0], trials[1], trials[2]
    shutil.rmtree(sweep / failed["id"])
    shutil.rmtree(sweep / pending["id"])
    run_dir = sweep / interrupted["run_dir"]
    staging = run_dir.parent / f".{run_dir.name}.staging"
    run_dir.rename(staging)
    manifest = json.loads((staging / "manifest.json").read_text(encoding="utf-8"))
    (staging / "manifest.json").write_text(json.dumps({**manifest, "status": "running"}), encoding="utf-8")

    def change(data: dict[str, Any]) -> None:
        data["status"] = "interrupted"
        data["trials"][0].update(status="failed", error="RuntimeError: out of memory")
        data["trials"][1]["status"] = "interrupted"
        data["trials"][2]["status"] = "pending"
    _edit_summary(sweep, change)
    result = run_cli("report", sweep, "-o", tmp_path / "report")
    assert result.exit_code == 0, result.output
    warnings = json.loads((tmp_path / "report" / "report.json").read_text(encoding="utf-8"))["warnings"]
    assert f"left out, unfinished: {sweep / failed['id']} (trial failed: RuntimeError: out of memory)" in warnings
    assert f"left out, unfinished: {sweep / pending['id']} (trial pending)" in warnings
    assert any(w.startswith(f"left out, unfinished: {staging} (interrupted run") for w in warnings)
    assert f"sweep {sweep}: status 'interrupted', 5 of 8 trial(s) complete; the best configurations are those " \
           f"among the completed trials" in warnings


@pytest.mark.parametrize(("change", "field"), [
    (lambda d: d["trials"][0].update(run_dir="../../elsewhere/afqmc"), "trials[0].run_dir"),
    (lambda d: d["trials"][3].update(run_dir="/etc"), "trials[3].run_dir"),
    (lambda d: d["trials"][1].update(task=7), "trials[1].task"),
    (lambda d: d.update(trials={"a": 1}), "trials"),
    (lambda d: d["best"]["afqmc"].update(runs="x"), "best.afqmc.runs"),
])
def test_a_summary_it_cannot_trust_is_one_line(run_cli, sweep: Path, tmp_path: Path, change, field: str) -> None:
    _edit_summary(sweep, change)
    out = tmp_path / "report"
    message = _one_line_error(run_cli("report", sweep, "-o", out))
    assert f"{sweep / 'summary.json'}: field '{field}'" in message
    assert not out.exists()


def test_a_damaged_summary_is_one_line(run_cli, sweep: Path) -> None:
    (sweep / "summary.json").write_text('{"schema": "clue-core/sweep@1", "trials": [', encoding="utf-8")
    message = _one_line_error(run_cli("report", sweep))
    assert f"{sweep / 'summary.json'}: cannot read the sweep's summary" in message and "rebuilds it" in message


def test_without_its_summary_the_line_says_where_the_runs_are(run_cli, sweep: Path) -> None:
    (sweep / "summary.json").unlink()
    message = _one_line_error(run_cli("report", sweep))
    first = sorted(p.parent for p in sweep.glob("*/*/metrics.json"))[0]
    assert message.startswith(f"error: {sweep}: no metrics.json")  # or a section's file (comparison.json)
    assert message.endswith(f" here or in its sub-folders; 8 run(s) are one level further down (e.g. {first}): "
                            f"pass their folders ({sweep}/*)\n")
    result = run_cli("report", *sorted(p for p in sweep.iterdir() if p.is_dir()))
    assert result.exit_code == 0, result.output  # as plain runs: one row, the grid point folded in (and noted)
    assert sum(line.startswith("afqmc ") for line in result.output.splitlines()) == 4


def test_a_summary_listing_no_trial_is_one_line_and_writes_nothing(run_cli, tmp_path: Path) -> None:
    """It printed an empty table (exit 0) and wrote an empty report, where a folder of unfinished runs is refused."""
    folder = tmp_path / "sweep"
    folder.mkdir()
    (folder / "summary.json").write_text(json.dumps({"schema": "clue-core/sweep@1", "status": "running",
                                                     "trials": [], "best": {}}), encoding="utf-8")
    assert _one_line_error(run_cli("report", folder)) == (
        f"error: {folder / 'summary.json'}: lists no trial, nothing to report\n")
    _one_line_error(run_cli("report", folder, "-o", tmp_path / "report"))
    assert not (tmp_path / "report").exists()
