"""clue-data's cache: download + unpack once, locks, and write failures that name the cache.

Downloading itself is tested in test_download.py and unpacking in test_archive.py; here
they are driven through ensure_task_data / resolve_task_data (with clue-data's fetcher) as the runner
uses them. The rest of the data layer: tests/core/test_data_lookup.py (--data-dir),
tests/core/test_data_user_zip.py, test_data_cli.py.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import errno
import hashlib
import os
import sys
from pathlib import Path

import pytest

from clue_core.data import find_file
from clue_core.errors import DataError
from clue_data import archive
from clue_data.cache import ensure_task_data
from clue_data.hooks import OFFICIAL

FETCHERS = {OFFICIAL.name: OFFICIAL}  # the kernel's registry when clue-data is installed

try:
    from tests.support.data_tasks import (
        AFQMC,
        AFQMC_ZIP,
        CMNLI,
        CMNLI_ZIP,
        FILLER,
        Task,
        isolated_home,
        listing,
        resolve_task_data,
        task_for,
    )
    from tests.support.local_http import LocalServer, zip_bytes
except ModuleNotFoundError:  # plain `pytest` does not put the repository root on sys.path
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from tests.support.data_tasks import (
        AFQMC,
        AFQMC_ZIP,
        CMNLI,
        CMNLI_ZIP,
        FILLER,
        Task,
        isolated_home,
        listing,
        resolve_task_data,
        task_for,
    )
    from tests.support.local_http import LocalServer, zip_bytes


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty cache, no mirror override, no waiting between retries, no remembered user zips."""
    return isolated_home(tmp_path, monkeypatch)


# ------------------------------------------------------------------ the cache: download and unpack once


@pytest.mark.parametrize(
    ("task", "archive_bytes", "train_at"),
    [(AFQMC, AFQMC_ZIP, "train.json"), (CMNLI, CMNLI_ZIP, "cmnli_public/train.json")],
    ids=["root-layout", "subfolder-layout"],
)
def test_ensure_task_data_downloads_verifies_and_extracts_via_clue_data_url(
    home: Path, monkeypatch: pytest.MonkeyPatch, task: Task, archive_bytes: bytes, train_at: str
) -> None:
    with LocalServer({task.source.filename: archive_bytes}) as server:
        monkeypatch.setenv("CLUE_DATA_URL", server.url.rstrip("/"))
        folder = ensure_task_data(task, progress=False)
        again = resolve_task_data(task, fetchers=FETCHERS)  # cached: no second request
        requests = server.requests

    assert folder == again == home / "data" / task.name
    assert [r.path for r in requests] == [task.source.filename]
    assert find_file(folder, "train.json") == folder / train_at
    assert not [p for p in listing(folder) if "MACOSX" in p or p.endswith(".DS_Store") or "/._" in p]
    assert (home / "downloads" / task.source.filename).read_bytes() == archive_bytes
    assert listing(home / "downloads") == [task.source.filename]
    assert not [p for p in listing(home / "data") if p.startswith(".")]  # no staging folder left
    assert listing(home / "locks") == []  # the lock is deleted by its holder


@pytest.mark.skipif(sys.platform == "win32", reason="download locking uses fcntl")
def test_concurrent_callers_download_once(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ranks of a distributed launch all ask for the data at once; one download serves them all."""
    with LocalServer({"afqmc_public.zip": AFQMC_ZIP}) as server:
        monkeypatch.setenv("CLUE_DATA_URL", server.url)
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            folders = list(pool.map(lambda _: ensure_task_data(AFQMC, progress=False), range(8)))
        assert len(server.requests) == 1
    assert set(folders) == {home / "data" / "afqmc"}
    assert listing(home / "locks") == []


def test_checksum_mismatch_keeps_nothing(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    served = AFQMC_ZIP[:-1] + bytes([AFQMC_ZIP[-1] ^ 0xFF])
    with LocalServer({"afqmc_public.zip": served}) as server:
        monkeypatch.setenv("CLUE_DATA_URL", server.url)
        with pytest.raises(DataError) as error:
            ensure_task_data(AFQMC, progress=False)
    message = str(error.value)
    assert f"sha256 mismatch: expected {AFQMC.source.sha256}, got {hashlib.sha256(served).hexdigest()}" in message
    assert server.url_for("afqmc_public.zip") in message
    assert listing(home / "downloads") == listing(home / "data") == listing(home / "locks") == []


def test_task_without_source_is_a_data_error(home: Path) -> None:
    with pytest.raises(DataError, match="no download source"):
        ensure_task_data(dataclasses.replace(AFQMC, source=None))


BAD_ARCHIVES = {
    "truncated": AFQMC_ZIP[: len(AFQMC_ZIP) // 2],
    "traversal": zip_bytes({"train.json": b"{}\n", "../../evil.txt": b"pwned"}),
    "over-the-cap": zip_bytes({"train.json": b"{}\n", "dev.json": FILLER}),  # the cap is patched below FILLER
}


@pytest.mark.parametrize("kind", BAD_ARCHIVES)
def test_failed_archives_leave_no_lock_staging_or_data(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    monkeypatch.setattr(archive, "MAX_MEMBER_BYTES", len(FILLER) - 1)
    bad = BAD_ARCHIVES[kind]
    served = task_for("afqmc", "afqmc_public.zip", bad)
    with LocalServer({"afqmc_public.zip": bad}) as server:
        monkeypatch.setenv("CLUE_DATA_URL", server.url)
        with pytest.raises(DataError, match=r"afqmc_public\.zip"):
            ensure_task_data(served, progress=False)
    user_zip = tmp_path / "mine.zip"
    user_zip.write_bytes(bad)
    with pytest.raises(DataError, match=r"mine\.zip"):
        resolve_task_data(served, data_dir=user_zip)

    assert listing(home / "locks") == []
    assert listing(home / "data") == listing(home / "extracted") == []
    assert listing(home / "downloads") == ["afqmc_public.zip"]  # verified; only unpacking failed
    assert not (tmp_path / "evil.txt").exists() and not (home / "evil.txt").exists()


# ------------------------------------------------------------------ write failures name the cache


def refuse_mkdir_under(monkeypatch: pytest.MonkeyPatch, root: Path, code: int) -> None:
    """Make creating any folder below ``root`` fail with ``code``, as a read-only or full disk would.

    Permission bits do not stop root (CI), so the OS error is injected where it would arise.
    """
    real_mkdir = os.mkdir

    def mkdir(path: str | os.PathLike[str], *args: object, **kwargs: object) -> None:
        if Path(path).is_relative_to(root):
            raise OSError(code, os.strerror(code), str(path))
        real_mkdir(path, *args, **kwargs)

    monkeypatch.setattr(os, "mkdir", mkdir)


@pytest.mark.parametrize("code", [errno.EACCES, errno.EROFS, errno.ENOSPC], ids=["EACCES", "EROFS", "ENOSPC"])
def test_unwritable_cache_says_cannot_write_and_names_clue_home(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch, code: int
) -> None:
    user_zip = tmp_path / "afqmc_public.zip"
    user_zip.write_bytes(AFQMC_ZIP)
    refuse_mkdir_under(monkeypatch, home, code)
    expected = f"cannot write to the data cache $CLUE_HOME ({home}): {os.strerror(code)}"

    with pytest.raises(DataError) as from_zip:
        resolve_task_data(AFQMC, data_dir=user_zip)
    with LocalServer({"afqmc_public.zip": AFQMC_ZIP}) as server:
        monkeypatch.setenv("CLUE_DATA_URL", server.url)
        with pytest.raises(DataError) as from_download:
            ensure_task_data(AFQMC, progress=False)

    assert str(from_zip.value) == str(from_download.value) == expected
    assert "cannot read" not in str(from_zip.value)


def test_write_failure_while_unpacking_names_the_cache_and_leaves_no_lock(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The locks and the download succeed; only the unpacked folders cannot be created."""
    user_zip = tmp_path / "afqmc_public.zip"
    user_zip.write_bytes(AFQMC_ZIP)
    refuse_mkdir_under(monkeypatch, home / "extracted", errno.ENOSPC)
    refuse_mkdir_under(monkeypatch, home / "data", errno.EROFS)

    with pytest.raises(DataError) as from_zip:
        resolve_task_data(AFQMC, data_dir=user_zip)
    with LocalServer({"afqmc_public.zip": AFQMC_ZIP}) as server:
        monkeypatch.setenv("CLUE_DATA_URL", server.url)
        with pytest.raises(DataError) as from_download:
            ensure_task_data(AFQMC, progress=False)

    assert str(from_zip.value) == f"cannot write to the data cache $CLUE_HOME ({home}): No space left on device"
    assert str(from_download.value) == f"cannot write to the data cache $CLUE_HOME ({home}): Read-only file system"
    assert listing(home) == ["downloads", "downloads/afqmc_public.zip", "locks"]


def test_unwritable_default_cache_suggests_clue_home(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CLUE_HOME")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    user_zip = tmp_path / "afqmc_public.zip"
    user_zip.write_bytes(AFQMC_ZIP)
    refuse_mkdir_under(monkeypatch, tmp_path / "xdg", errno.EACCES)
    with pytest.raises(DataError) as error:
        resolve_task_data(AFQMC, data_dir=user_zip)
    assert str(error.value) == (
        f"cannot write to the data cache {tmp_path / 'xdg' / 'clue-core'}: Permission denied "
        "(set CLUE_HOME to use another folder)"
    )


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_full_disk_during_download_names_the_cache(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A real ENOSPC: the partial download is a link to /dev/full."""
    (home / "downloads").mkdir(parents=True)
    (home / "downloads" / "afqmc_public.zip.part").symlink_to("/dev/full")
    with LocalServer({"afqmc_public.zip": AFQMC_ZIP}) as server:
        monkeypatch.setenv("CLUE_DATA_URL", server.url)
        with pytest.raises(DataError) as error:
            ensure_task_data(AFQMC, progress=False)
    assert str(error.value) == f"cannot write to the data cache $CLUE_HOME ({home}): No space left on device"
    assert listing(home / "locks") == listing(home / "data") == []


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permission bits")
def test_really_read_only_cache(tmp_path: Path, home: Path) -> None:
    user_zip = tmp_path / "afqmc_public.zip"
    user_zip.write_bytes(AFQMC_ZIP)
    home.mkdir()
    home.chmod(0o555)
    try:
        if os.access(home, os.W_OK):
            pytest.skip("running as root: permission bits do not stop writes (the injected cases cover it)")
        with pytest.raises(DataError) as error:
            resolve_task_data(AFQMC, data_dir=user_zip)
    finally:
        home.chmod(0o755)
    assert str(error.value) == f"cannot write to the data cache $CLUE_HOME ({home}): Permission denied"
