"""A disk fault while ``clue-core compare`` writes leaves neither file half-done nor one without the other
(issue 18 round 2 review: a full disk wrote the sheet, over the user's with --force, and no comparison)."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from clue_core import atomic
from tests.compare.fixtures import write_run

QUESTIONS = [("q1", "计算", 8.0), ("q2", "知识百科", 6.0), ("q3", "角色扮演", 4.0)]


def _fail_writing(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """``fsync`` of the file being written as ``name`` fails with a full disk; others are written."""
    real = atomic.os.fsync

    def fsync(fd: int) -> None:
        if name in os.readlink(f"/proc/self/fd/{fd}"):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real(fd)

    monkeypatch.setattr(atomic.os, "fsync", fsync)


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="names open files through /proc")
@pytest.mark.parametrize("failing", ["comparison.json", "sheet.csv"])
def test_a_full_disk_writes_neither_file(compare, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         failing: str) -> None:
    ref = write_run(tmp_path / "ref", "ref-model", QUESTIONS)
    other = write_run(tmp_path / "a", "a-model", [(q, d, p - 2) for q, d, p in QUESTIONS])
    sheet = tmp_path / "sheet.csv"
    sheet.write_text("an older sheet, replaced only once the new one is written\n", encoding="utf-8")
    out = tmp_path / "out"
    _fail_writing(monkeypatch, failing)
    result = compare(other, "--reference", ref, "-o", out, "--export-sheet", sheet, "--force")
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert result.output.count("\n") == 1, result.output
    assert f"cannot write the comparison: {out / 'comparison.json' if failing == 'comparison.json' else sheet}: " \
           f"{os.strerror(errno.ENOSPC)} (the disk is full" in result.output
    assert sheet.read_text(encoding="utf-8") == "an older sheet, replaced only once the new one is written\n"
    assert not (out / "comparison.json").exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []
    assert [p.name for p in out.iterdir()] == [] if out.exists() else True
