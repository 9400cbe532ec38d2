"""Helpers of the clue-tasks-classic tests: raw sample records, where samples live, the real samples."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from clue_core.data import sample_dir
from clue_core.specs import TaskSpec
from clue_tasks_classic.catalog import TASKS

REAL_SAMPLES = Path(__file__).resolve().parents[2].parent / "shared" / "reference" / "real-samples"
needs_real_samples = pytest.mark.skipif(
    not REAL_SAMPLES.is_dir(), reason=f"real CLUE sample zips not found at {REAL_SAMPLES} (they are not shipped)"
)

TASK_NAMES = [spec.name for spec in TASKS]
SPLITS = [(spec.name, split) for spec in TASKS for split in (*spec.splits, *(t.split for t in spec.test_versions))]


def raw_records(path: Path) -> list[dict]:
    """The records of a JSON Lines file, parsed without the project's code."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def sample_file(spec: TaskSpec, split: str) -> Path:
    """Where the bundled sample keeps ``split`` (independent of the reader's lookup)."""
    root = sample_dir(spec)
    names = {("ocnli", "train"): "train.50k.json", ("cmnli", "train"): "cmnli_public/train.json",
             ("cmnli", "dev"): "cmnli_public/dev.json", ("cmnli", "test"): "cmnli_public/test.json",
             ("diagnostics", "test"): "diagnostics_test.json"}
    return root / names.get((spec.name, split), f"{split}.json")


def extract_real(name: str, dest: Path) -> Path:
    with zipfile.ZipFile(REAL_SAMPLES / f"{name}.zip") as archive:
        archive.extractall(dest)
    return dest
