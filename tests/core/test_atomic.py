"""atomic.py: files appear whole or not at all, with the permissions the umask asks for."""

from __future__ import annotations

import os
import stat
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from clue_core.atomic import atomic_open, write_json, write_jsonl

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX permission bits")


@pytest.fixture(params=[0o022, 0o027, 0o077], ids=["umask-022", "umask-027", "umask-077"])
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    """Run the test under a umask, restoring the previous one after."""
    previous = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(previous)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_files_get_the_mode_the_umask_asks_for(tmp_path: Path, umask: int) -> None:
    expected = 0o666 & ~umask  # 0644 under 022, 0640 under 027, 0600 under 077
    write_json(tmp_path / "metrics.json", {"accuracy": 0.5})
    write_jsonl(tmp_path / "predictions.json", [{"id": 0, "label": "1"}])
    with atomic_open(tmp_path / "blob.bin", "wb") as handle:
        handle.write(b"\x00\x01")
    for name in ("metrics.json", "predictions.json", "blob.bin"):
        assert mode(tmp_path / name) == expected, name


def test_a_zip_of_written_files_carries_their_mode(tmp_path: Path, umask: int) -> None:
    """What ``clue-core submit`` does: zipfile.write copies each file's mode into the archive."""
    write_jsonl(tmp_path / "afqmc_predict.json", [{"id": 0, "label": "1"}])
    with atomic_open(tmp_path / "submission.zip", "wb") as handle, zipfile.ZipFile(handle, "w") as archive:
        archive.write(tmp_path / "afqmc_predict.json", arcname="afqmc_predict.json")
    with zipfile.ZipFile(tmp_path / "submission.zip") as archive:
        member_mode = stat.S_IMODE(archive.getinfo("afqmc_predict.json").external_attr >> 16)
    assert member_mode == mode(tmp_path / "submission.zip") == 0o666 & ~umask


def test_replacing_a_file_is_atomic_and_a_failure_leaves_the_old_one(tmp_path: Path) -> None:
    target = tmp_path / "out" / "metrics.json"
    write_json(target, {"v": 1})
    with pytest.raises(RuntimeError), atomic_open(target) as handle:
        handle.write('{"v": 2, "half": ')
        raise RuntimeError("interrupted")
    assert target.read_text(encoding="utf-8") == '{\n  "v": 1\n}\n'
    assert sorted(p.name for p in target.parent.iterdir()) == ["metrics.json"]  # no temporary left
    write_json(target, {"v": 3})
    assert target.read_text(encoding="utf-8") == '{\n  "v": 3\n}\n'
    assert sorted(p.name for p in target.parent.iterdir()) == ["metrics.json"]


def test_chinese_text_stays_readable(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "p.json", [{"label": "正面"}])
    assert (tmp_path / "p.json").read_text(encoding="utf-8") == '{"label": "正面"}\n'


def test_a_failed_write_removes_the_folders_it_created_and_keeps_the_rest(tmp_path: Path) -> None:
    (tmp_path / "kept").mkdir()
    target = tmp_path / "kept" / "new" / "deeper" / "x.json"
    with pytest.raises(OSError), atomic_open(target) as handle:
        handle.write("half")
        raise OSError(28, "No space left on device")
    assert sorted(p.name for p in (tmp_path / "kept").iterdir()) == []  # new/deeper gone, kept stays
    (tmp_path / "kept" / "mine").mkdir(parents=True)
    (tmp_path / "kept" / "mine" / "note.txt").write_text("the user's")
    with pytest.raises(OSError), atomic_open(tmp_path / "kept" / "mine" / "sub" / "x.json") as handle:
        raise OSError(28, "No space left on device")
    assert sorted(p.name for p in (tmp_path / "kept" / "mine").iterdir()) == ["note.txt"]


def test_a_temporary_that_cannot_be_created_leaves_no_new_folder(tmp_path: Path, monkeypatch) -> None:
    import clue_core.atomic as atomic

    def full(path: Path) -> tuple[int, str]:
        raise OSError(28, "No space left on device", str(path))

    monkeypatch.setattr(atomic, "_create_temporary", full)
    with pytest.raises(OSError, match=r"x\.zip"), atomic_open(tmp_path / "out" / "x.zip", "wb"):
        pass
    assert list(tmp_path.iterdir()) == []
