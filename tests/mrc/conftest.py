"""Shared helpers for the clue-tasks-mrc tests: sample and real-record folders."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from clue_core.data import find_file

SAMPLES = Path(__file__).resolve().parents[2] / "plugins" / "clue-tasks-mrc" / "clue_tasks_mrc" / "samples"
REAL_SAMPLES = Path(__file__).resolve().parents[2].parent / "shared" / "reference" / "real-samples"


@pytest.fixture
def real_records(tmp_path_factory):
    """Extract ``real-samples/<task>.zip`` (official records) or skip, saying why."""

    def extract(task: str) -> Path:
        archive = REAL_SAMPLES / f"{task}.zip"
        if not archive.is_file():
            pytest.skip(f"real records {archive} not present")
        target = tmp_path_factory.mktemp(f"real-{task}")
        with zipfile.ZipFile(archive) as handle:
            handle.extractall(target)
        return target

    return extract


def sample_file(task: str, name: str) -> Path:
    path = find_file(SAMPLES / task, name)
    assert path is not None
    return path
