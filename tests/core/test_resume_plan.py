"""``--resume`` is settled in planning, once per task, before any task's data is read; only the
comparison of a resumed run's data files waits for the data (issue 30, step 6).

A run of several tasks whose later task cannot resume is refused before the first task's data is
read or anything is written; a staged run whose data files changed since it started is refused once
they are read, in one line, its staging folder kept; and the same with a different seed as well is
refused at planning, naming the seed.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from clue_builtin.baseline import BaselineLearner
from clue_core import task_data

SAMPLE = Path(__file__).resolve().parents[2] / "plugins" / "clue-tasks-classic" / "clue_tasks_classic" / "samples"


def _interrupt_first_fit(monkeypatch) -> None:
    fit = BaselineLearner.fit
    calls = {"n": 0}

    def interrupted(self, train, dev, context):
        calls["n"] += 1
        if calls["n"] == 1:
            raise KeyboardInterrupt
        return fit(self, train, dev, context)

    monkeypatch.setattr(BaselineLearner, "fit", interrupted)


def _staged_afqmc(run_cli, tmp_path, monkeypatch) -> tuple[Path, Path]:
    """An afqmc run from a copy of the sample, interrupted in its fit: (its data folder, the output folder)."""
    data = tmp_path / "data" / "afqmc"
    shutil.copytree(SAMPLE / "afqmc", data)
    _interrupt_first_fit(monkeypatch)
    out = tmp_path / "runs"
    stopped = run_cli("run", "afqmc", "-m", "baseline", "--data-dir", data, "-o", out)
    assert stopped.exit_code == 130 and (out / ".afqmc.staging").is_dir()
    return data, out


def _reverse_lines(path: Path) -> None:
    """The same examples in another order: a valid file with other bytes (another checksum)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    path.write_text("\n".join(reversed(lines)) + "\n", encoding="utf-8")


def test_a_staged_run_whose_data_changed_is_refused_once_it_is_read(run_cli, tmp_path, monkeypatch):
    data, out = _staged_afqmc(run_cli, tmp_path, monkeypatch)
    _reverse_lines(data / "dev.json")
    refused = run_cli("run", "afqmc", "-m", "baseline", "--data-dir", data, "-o", out, "--resume")
    staging = out / ".afqmc.staging"
    assert refused.exit_code == 2 and refused.output == (
        f"error: cannot resume {staging}: it was started with a different set of data files "
        f"({data / 'dev.json'} changed); use --overwrite to start over\n")
    assert staging.is_dir() and not (out / "afqmc").exists() and not (out / ".afqmc.lock").exists()
    _reverse_lines(data / "dev.json")  # the files it started with again: it resumes
    resumed = run_cli("run", "afqmc", "-m", "baseline", "--data-dir", data, "-o", out, "--resume")
    assert resumed.exit_code == 0, resumed.output
    assert (out / "afqmc" / "metrics.json").is_file() and not staging.exists()


def test_a_staged_run_with_another_seed_is_refused_before_its_data_is_read(run_cli, tmp_path, monkeypatch):
    data, out = _staged_afqmc(run_cli, tmp_path, monkeypatch)
    _reverse_lines(data / "dev.json")
    read: list[str] = []
    monkeypatch.setattr(task_data, "read_split", lambda task, *a, **k: read.append(task.name))
    refused = run_cli("run", "afqmc", "-m", "baseline", "--data-dir", data, "-o", out, "--resume", "--seed", "7")
    assert refused.exit_code == 2 and refused.output == (
        f"error: cannot resume {out / '.afqmc.staging'}: it was started with a different seed (42 → 7); "
        f"use --overwrite to start over\n")
    assert read == []


def test_a_later_task_that_cannot_resume_stops_the_run_before_any_data_is_read(run_cli, tmp_path, monkeypatch):
    out = tmp_path / "runs"
    first = run_cli("run", "tnews", "-m", "baseline", "--sample", "-o", out)
    assert first.exit_code == 0, first.output
    read: list[str] = []
    monkeypatch.setattr(task_data, "read_split", lambda task, *a, **k: read.append(task.name))
    again = run_cli("run", "afqmc", "tnews", "-m", "baseline", "--sample", "-o", out)
    assert again.exit_code == 2 and again.output == (
        f"error: {out / 'tnews'} already holds a run; pass --overwrite to replace it (the old run stays until "
        f"the new one is complete) or --resume to continue it\n")
    assert read == [] and sorted(p.name for p in out.iterdir()) == ["tnews"]  # no afqmc, no lock left


def test_a_relative_data_dir_is_recorded_absolute_and_resumes_from_another_folder(run_cli, tmp_path, monkeypatch):
    """The manifest used to keep `--data-dir data/afqmc` as typed: resumed from another folder with the path
    that reaches the same files there, the run was refused for 'a different set of data files', and the
    report read the dev data relative to wherever it was drawn."""
    import json

    shutil.copytree(SAMPLE / "afqmc", tmp_path / "data" / "afqmc")
    _interrupt_first_fit(monkeypatch)
    out = tmp_path / "runs"
    monkeypatch.chdir(tmp_path)
    stopped = run_cli("run", "afqmc", "-m", "baseline", "--data-dir", "data/afqmc", "-o", out)
    assert stopped.exit_code == 130
    monkeypatch.chdir(tmp_path / "data")
    resumed = run_cli("run", "afqmc", "-m", "baseline", "--data-dir", "afqmc", "-o", out, "--resume")
    assert resumed.exit_code == 0, resumed.output
    source = json.loads((out / "afqmc" / "manifest.json").read_text(encoding="utf-8"))["data"]
    assert source["data_dir"] == str(tmp_path / "data" / "afqmc") and source["user_data_dir"] == "afqmc"
    assert sorted(source["files"]) == [str(tmp_path / "data" / "afqmc" / f"{s}.json") for s in ("dev", "test", "train")]


def test_a_run_staged_with_relative_file_names_still_resumes_from_its_folder(run_cli, tmp_path, monkeypatch):
    """Staging folders an earlier version wrote name their data files as typed, relative to where the run started."""
    import json

    monkeypatch.chdir(tmp_path)
    data, out = _staged_afqmc(run_cli, tmp_path, monkeypatch)
    manifest = out / ".afqmc.staging" / "manifest.json"
    record = json.loads(manifest.read_text(encoding="utf-8"))
    record["data"]["files"] = {str(Path(k).relative_to(tmp_path)): v for k, v in record["data"]["files"].items()}
    manifest.write_text(json.dumps(record), encoding="utf-8")
    resumed = run_cli("run", "afqmc", "-m", "baseline", "--data-dir", data, "-o", out, "--resume")
    assert resumed.exit_code == 0, resumed.output
