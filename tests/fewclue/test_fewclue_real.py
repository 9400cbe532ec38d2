"""Every split of every task from FewCLUE's real files (skipped where /work/fewclue/datasets is absent).

No official file may be refused: each of the 14 files of each task (five train/dev pairs, the
merged pair, test_public, test) is read under the split setting that names it, through the
checks clue-core makes after every reader, and every non-blank line becomes one example.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from tests.fewclue.helpers import NAMES, REAL, SUBMISSION, folder, needs_real, raw_records, read

pytestmark = needs_real
PAIRS = ("few_all", "0", "1", "2", "3", "4")


@pytest.mark.parametrize("name", NAMES)
def test_every_official_file_reads(name: str) -> None:
    for pair in PAIRS:
        for split in ("train", "dev"):
            part = read(name, REAL, split, {"split": pair})
            path = REAL / folder(name) / f"{split}_{pair}.json"
            assert part.files == (str(path),)
            assert len(part.examples) == len(raw_records(path))
            assert all(example.label is not None for example in part.examples)
    for split in ("test_public", "test"):
        part = read(name, REAL, split)
        assert len(part.examples) == len(raw_records(REAL / folder(name) / f"{split}.json"))
        assert all((example.label is None) == (split == "test") for example in part.examples)


def test_the_known_quirks_of_the_real_files() -> None:
    csldcp = read("fewclue-csldcp", REAL, "test_public")
    assert sum(isinstance(e.id, str) for e in csldcp.examples) == 49
    assert [e.id for e in read("fewclue-tnews", REAL, "test").examples[:2]] == ["0", "1"]
    assert {len(e.choices) for e in read("fewclue-chid", REAL, "test_public").examples} == {7}
    assert len({e.label for e in read("fewclue-iflytek", REAL, "train").examples}) == 119


@pytest.mark.slow
def test_all_nine_with_the_baseline_and_submit(run_cli, tmp_path: Path) -> None:
    out = tmp_path / "runs"
    result = run_cli("run", *NAMES, "--model", "baseline", "--data-dir", REAL, "-o", out)
    assert result.exit_code == 0, result.output
    dev = {name: json.loads((out / name / "metrics.json").read_text(encoding="utf-8"))["dev"]["accuracy"]
           for name in NAMES}
    assert dev["fewclue-eprstmt"] == pytest.approx(46.25) and dev["fewclue-chid"] == pytest.approx(14.851485)
    result = run_cli("submit", out, "-o", tmp_path / "submit.zip")
    assert result.exit_code == 0, result.output
    with zipfile.ZipFile(tmp_path / "submit.zip") as archive:
        for name in NAMES:
            lines = archive.read(SUBMISSION[name]).decode().splitlines()
            assert len(lines) == len(raw_records(REAL / folder(name) / "test.json"))
