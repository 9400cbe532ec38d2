"""A full disk (or quota, or read-only file system) during a run: one line naming the file, nothing left.

Real write errors carry no file name (``handle.write`` raises ``OSError(ENOSPC)`` with
``filename=None``), so the faults are injected the same way: through ``os.fsync`` or a
partial ``write_text`` that raises ``OSError(errno.ENOSPC, ...)`` without a name.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from clue_core import atomic
from clue_core.atomic import write_json
from clue_core.rundir import RunLock

TASK = "review-sentiment"


def no_space(*_: object) -> None:
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def fsync_failing_for(monkeypatch: pytest.MonkeyPatch, name: str, code: int = errno.ENOSPC) -> None:
    """``os.fsync`` fails as a full disk would, for temporaries of files called ``name``."""
    real = os.fsync

    def fsync(fd: int) -> None:
        if f".{name}." in os.readlink(f"/proc/self/fd/{fd}"):
            raise OSError(code, os.strerror(code))
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc to tell the files apart")
def test_an_atomic_write_that_fails_names_its_file_and_leaves_no_temporary(tmp_path, monkeypatch):
    target = tmp_path / "metrics.json"
    fsync_failing_for(monkeypatch, "metrics.json")
    with pytest.raises(OSError) as caught:
        write_json(target, {"accuracy": 1})
    assert caught.value.errno == errno.ENOSPC and caught.value.filename == str(target)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("code, advice", [(errno.ENOSPC, "free some space"), (errno.EDQUOT, "quota"),
                                          (errno.EROFS, "read-only"), (errno.EIO, "check the disk")])
def test_the_disk_fault_message_names_the_path_and_what_to_do(code, advice):
    fault = OSError(code, os.strerror(code), "/runs/x/y.json")
    message = atomic.disk_fault_message("tnews: cannot write the run", fault)
    assert message.startswith("tnews: cannot write the run: /runs/x/y.json: " + os.strerror(code))
    assert advice in message and "\n" not in message


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc to tell the files apart")
@pytest.mark.parametrize("name", ["manifest.json", "dev.jsonl", "metrics.json"])
def test_a_full_disk_while_the_kernel_writes_is_one_line_naming_the_file(run_cli, tmp_path, monkeypatch, name):
    out = tmp_path / "out"
    fsync_failing_for(monkeypatch, name)
    result = run_cli("run", TASK, "--model", "baseline", "--sample", "-o", out)
    assert result.exit_code == 2, result.output
    error = result.output.strip().splitlines()[-1]
    assert error.startswith(f"error: {TASK}: cannot write the run: {out / f'.{TASK}.staging'}")
    assert f"{name}: No space left on device" in error and "free some space" in error
    assert "Traceback" not in result.output
    assert not out.exists()  # the staging folder and the output folder this run made are gone


def test_a_full_disk_while_taking_the_lock_leaves_no_lock_file(tmp_path, monkeypatch):
    real = Path.write_text

    def half(self: Path, text: str, *args: object, **kwargs: object) -> int:
        real(self, text[:5], *args, **kwargs)  # what fits before the disk is full
        no_space()
        return 0

    monkeypatch.setattr(Path, "write_text", half)
    lock = RunLock(tmp_path / f".{TASK}.lock", tmp_path / TASK)
    with pytest.raises(OSError):
        lock.acquire(["clue-core", "run"])
    assert list(tmp_path.iterdir()) == [] and not lock.held


def test_a_full_disk_at_planning_is_one_line_and_leaves_nothing(run_cli, tmp_path, monkeypatch):
    real = Path.write_text
    out = tmp_path / "out"

    def half(self: Path, text: str, *args: object, **kwargs: object) -> int:
        if self.parent == out:
            real(self, text[:5], *args, **kwargs)
            no_space()
        return real(self, text, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", half)
    result = run_cli("run", TASK, "--model", "baseline", "--sample", "-o", out)
    assert result.exit_code == 2, result.output
    assert f"cannot write to output directory {out}: No space left on device" in result.output
    assert not out.exists()  # no .review-sentiment.lock.<pid> keeps it



def test_a_full_disk_while_replacing_a_run_keeps_the_old_one_in_place(run_cli, tmp_path, monkeypatch):
    out = tmp_path / "out"
    assert run_cli("run", TASK, "--model", "baseline", "--sample", "-o", out).exit_code == 0
    before = (out / TASK / "manifest.json").read_bytes()
    real = os.rename

    def rename(source, target, *args, **kwargs):
        if str(source).endswith(".staging"):  # the directory cannot grow: the disk is full
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(source), None, str(target))
        return real(source, target, *args, **kwargs)

    monkeypatch.setattr(os, "rename", rename)
    result = run_cli("run", TASK, "--model", "baseline", "--sample", "-o", out, "--overwrite", "--seed", "3")
    assert result.exit_code == 2 and "No space left on device" in result.output, result.output
    assert (out / TASK / "manifest.json").read_bytes() == before
    assert sorted(p.name for p in out.iterdir()) == [TASK]  # no staging, lock or replaced folder left


def test_a_temporary_that_cannot_be_created_is_named_as_the_file_meant(tmp_path, monkeypatch):
    real = os.open

    def full(name, flags, *args):
        if flags & os.O_CREAT:  # no room for one more entry (inodes used up)
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), name)
        return real(name, flags, *args)

    monkeypatch.setattr(os, "open", full)
    with pytest.raises(OSError) as caught:
        write_json(tmp_path / "metrics.json", {})
    assert caught.value.filename == str(tmp_path / "metrics.json")
