"""``submit.json`` in a folder: submit packs the runs it names (a sweep's best per task), nothing else,
and never a path outside the folder."""

from __future__ import annotations

import json
import os
import shutil
import zipfile
from pathlib import Path

import pytest

from clue_core import api


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    """Two baseline runs of afqmc (two seeds) and one of tnews, one level further down than submit looks."""
    root = tmp_path_factory.mktemp("selection")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CLUE_HOME", str(root / "home"))
        for seed in (1, 2):
            api.run(["afqmc", "tnews"], model="baseline", sample=True, output_dir=root / "sweep" / f"seed-{seed}",
                    seed=seed, echo=None)
    return root / "sweep"


def select(folder: Path, runs, schema: str = "clue-core/selection@1") -> None:
    (folder / "submit.json").write_text(json.dumps({"schema": schema, "runs": runs}), encoding="utf-8")


def test_without_a_selection_the_nested_runs_are_not_found(run_cli, folder, tmp_path):
    result = run_cli("submit", folder, "-o", tmp_path / "s.zip")
    assert result.exit_code == 2 and "not a run directory" in result.output


def test_the_selected_runs_are_packed_and_only_they(run_cli, folder, tmp_path):
    work = shutil.copytree(folder, tmp_path / "sweep")
    select(work, ["seed-2/afqmc", "seed-1/tnews"])
    result = run_cli("submit", work, "-o", tmp_path / "s.zip")
    assert result.exit_code == 0, result.output
    with zipfile.ZipFile(tmp_path / "s.zip") as archive:
        assert sorted(archive.namelist()) == ["afqmc_predict.json", "tnews10_predict.json", "tnews11_predict.json"]
        assert archive.read("afqmc_predict.json") == (work / "seed-2/afqmc/submission/afqmc_predict.json").read_bytes()


def test_two_runs_of_one_task_selected_are_refused_by_file_name(run_cli, folder, tmp_path):
    work = shutil.copytree(folder, tmp_path / "sweep")
    select(work, ["seed-1/afqmc", "seed-2/afqmc"])
    result = run_cli("submit", work, "-o", tmp_path / "s.zip")
    assert result.exit_code == 2 and "afqmc_predict.json comes from two runs" in result.output


@pytest.mark.parametrize(("runs", "expected"), [
    (["../outside/afqmc"], "field 'runs[0]': '../outside/afqmc' is outside"),
    (["seed-1/afqmc", "ABSOLUTE"], "field 'runs[1]'"),
    (["link/afqmc"], "field 'runs[0]': 'link/afqmc' is outside"),
    (["seed-1"], "is not a run directory"),
    ([], "field 'runs': expected a non-empty list"),
    ("seed-1/afqmc", "field 'runs'"),
])
def test_a_selection_that_escapes_the_folder_or_names_no_run_is_one_line(run_cli, folder, tmp_path, runs, expected):
    outside = shutil.copytree(folder / "seed-1", tmp_path / "outside")
    work = shutil.copytree(folder, tmp_path / "sweep")
    os.symlink(outside, work / "link")
    if isinstance(runs, list):
        runs = [str(outside / "afqmc") if r == "ABSOLUTE" else r for r in runs]
    select(work, runs)
    result = run_cli("submit", work, "-o", tmp_path / "s.zip")
    assert result.exit_code == 2, result.output
    assert len(result.output.strip().splitlines()) == 1 and expected in result.output, result.output
    assert str(work / "submit.json") in result.output and not (tmp_path / "s.zip").exists()


def test_a_selection_of_another_schema_or_not_json_is_refused(run_cli, folder, tmp_path):
    work = shutil.copytree(folder, tmp_path / "sweep")
    select(work, ["seed-1/afqmc"], schema="clue-core/selection@2")
    result = run_cli("submit", work, "-o", tmp_path / "s.zip")
    assert result.exit_code == 2 and "field 'schema'" in result.output
    (work / "submit.json").write_text("{runs", encoding="utf-8")
    result = run_cli("submit", work, "-o", tmp_path / "s.zip")
    assert result.exit_code == 2 and "unreadable selection" in result.output
