"""A result cache that cannot be written says why, in the OS's words, beside the ways out: SQLite's
"unable to open database file" named ``--cache`` and ``result_cache=false`` but not the reason
(a read-only file system, a folder the user may not write, a directory where the file belongs)."""

from __future__ import annotations

import errno
import os
import shutil
import sqlite3
from pathlib import Path

import clue_models_llm.cache_reason as cache_reason

WAYS_OUT = "point --cache at another folder, or pass --set result_cache=false"


def _run(run_cli, out: Path, cache: Path):
    return run_cli("run", "afqmc", "--model", "llm-tiny", "--sample", "-o", out, "--cache", cache)


def test_a_read_only_cache_folder_names_the_os_reason(run_cli, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    real_open = os.open

    def read_only(path, flags, *args, **kwargs):  # what a read-only mount answers (root passes chmod)
        if str(path).startswith(str(cache)) and flags & os.O_CREAT:
            raise OSError(errno.EROFS, "Read-only file system", str(path))
        return real_open(path, flags, *args, **kwargs)

    def unable(*args, **kwargs):
        raise sqlite3.OperationalError("unable to open database file")

    monkeypatch.setattr(cache_reason.os, "open", read_only)
    monkeypatch.setattr("clue_models_llm.cache.sqlite3.connect", unable)
    result = _run(run_cli, tmp_path / "out", cache)
    assert result.exit_code == 2, result.output
    (path,) = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert path.startswith(f"error: cannot use the result cache {cache / 'llm'}")
    assert path.endswith(f": unable to open database file ([Errno 30] Read-only file system); {WAYS_OUT}")
    assert not (tmp_path / "out").exists() and list((cache / "llm").iterdir()) == []


def test_a_cache_file_that_is_a_folder_names_the_os_reason(run_cli, tmp_path):
    cache = tmp_path / "cache"
    assert _run(run_cli, tmp_path / "first", cache).exit_code == 0
    (database,) = (cache / "llm").glob("*.sqlite")
    for leftover in (cache / "llm").iterdir():
        leftover.unlink()
    database.mkdir()  # a real fault root cannot pass: the file's place is taken by a folder
    result = _run(run_cli, tmp_path / "out", cache)
    assert result.exit_code == 2, result.output
    assert result.output.splitlines()[-1] == (
        f"error: cannot use the result cache {database}: unable to open database file "
        f"([Errno 21] Is a directory: {database.name}); {WAYS_OUT}")
    shutil.rmtree(database)


def test_a_writable_cache_gives_no_reason(tmp_path):
    assert cache_reason.why_not_writable(tmp_path / "x.sqlite") is None
    assert list(tmp_path.iterdir()) == []  # the probe is gone
