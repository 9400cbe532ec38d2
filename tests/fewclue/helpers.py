"""Helpers of the clue-tasks-fewclue tests: the specs, raw records, the real FewCLUE files."""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from clue_core.data import sample_dir
from clue_core.examples import SplitData
from clue_core.reading import read_split
from clue_tasks_fewclue.catalog import TASKS

REAL = Path("/work/fewclue/datasets")
needs_real = pytest.mark.skipif(not REAL.is_dir(), reason=f"FewCLUE's datasets/ not found at {REAL} (not shipped)")

SPECS = {spec.name: spec for spec in TASKS}
NAMES = list(SPECS)
SAMPLE_FILES = ("train_few_all.json", "dev_few_all.json", "test_public.json", "test.json")
SUBMISSION = {"fewclue-eprstmt": "eprstmt_predict.json", "fewclue-csldcp": "csldcp_predict.json",
              "fewclue-tnews": "tnewsf_predict.json", "fewclue-iflytek": "iflytekf_predict.json",
              "fewclue-ocnli": "ocnlif_predict.json", "fewclue-bustm": "bustm_predict.json",
              "fewclue-chid": "chidf_predict.json", "fewclue-csl": "cslf_predict.json",
              "fewclue-cluewsc": "cluewscf_predict.json"}


def folder(name: str) -> str:
    return name.removeprefix("fewclue-")


def raw_records(path: Path) -> list[dict[str, Any]]:
    """A JSON Lines file parsed without the project's code (split on newlines only: IFLYTEK has U+2028)."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line.strip()]


def read(name: str, root: Path, split: str, settings: Mapping[str, Any] | None = None) -> SplitData:
    """One split through clue-core's ``read_split`` with a run's ``split`` setting (the reader, then its checks)."""
    return read_split(SPECS[name], root, split, settings)


def copy_sample(name: str, dest: Path) -> Path:
    """The task's bundled sample copied to ``dest/<folder>/``; returns that folder."""
    target = dest / folder(name)
    shutil.copytree(sample_dir(SPECS[name]), target)
    return target


def write_lines(path: Path, records: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path
