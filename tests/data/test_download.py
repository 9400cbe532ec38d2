"""clue-data's download / download_source: resume, retry, verify, mirrors, CLUE_DATA_URL, local write failures."""

from __future__ import annotations

import errno
import hashlib
import random
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from clue_core.errors import DataError
from clue_data import download as download_module
from clue_data.download import download, download_source, source_urls

try:
    from tests.support.local_http import LocalServer
except ModuleNotFoundError:  # plain `pytest` does not put the repository root on sys.path
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from tests.support.local_http import LocalServer

# Incompressible bytes, a few KB, so that a dropped connection lands mid-file.
ARCHIVE = random.Random(7).randbytes(6000)
SHA256 = hashlib.sha256(ARCHIVE).hexdigest()


@dataclass(frozen=True)
class Source:
    """What download_source reads of a DataSource."""

    url: str
    filename: str = "afqmc_public.zip"
    size: int | None = len(ARCHIVE)
    sha256: str | None = SHA256
    md5: str | None = None
    mirrors: tuple[str, ...] = ()


@pytest.fixture(autouse=True)
def no_waiting(monkeypatch: pytest.MonkeyPatch) -> None:
    """No mirror override and no waiting between retries."""
    monkeypatch.delenv("CLUE_DATA_URL", raising=False)
    monkeypatch.setattr(download_module, "BACKOFF_SECONDS", 0.0)


def test_resume_after_dropped_connection_sends_range(tmp_path: Path) -> None:
    dest = tmp_path / "out" / "afqmc_public.zip"
    with LocalServer({"a.zip": ARCHIVE}, drop_after=1000) as server:
        download(server.url_for("a.zip"), dest, size=len(ARCHIVE), sha256=SHA256, progress=False)
        first, second = server.requests

    assert "Range" not in first.headers and first.status == 200
    assert second.headers["Range"] == "bytes=1000-" and second.status == 206
    assert dest.read_bytes() == ARCHIVE
    assert not dest.with_name("afqmc_public.zip.part").exists()


def test_server_ignoring_range_restarts_from_scratch(tmp_path: Path) -> None:
    dest = tmp_path / "a.zip"
    with LocalServer({"a.zip": ARCHIVE}, drop_after=1000, ignore_range=True) as server:
        download(server.url_for("a.zip"), dest, sha256=SHA256, progress=False)
        requests = server.requests

    assert requests[1].headers.get("Range") == "bytes=1000-" and requests[1].status == 200
    assert dest.read_bytes() == ARCHIVE  # not the first 1000 bytes twice


def test_endless_restarts_are_bounded_and_a_later_call_resumes(tmp_path: Path) -> None:
    dest = tmp_path / "a.zip"
    with LocalServer({"a.zip": ARCHIVE}, drop_after=1000, drops=100, ignore_range=True) as server:
        with pytest.raises(DataError, match=r"failed after 3 attempts.*1000 bytes received are kept"):
            download(server.url_for("a.zip"), dest, size=len(ARCHIVE), retries=2, progress=False)
        assert len(server.requests) == 3  # restarting to the same point is no progress
    assert dest.with_name("a.zip.part").stat().st_size == 1000

    with LocalServer({"a.zip": ARCHIVE}) as server:
        download(server.url_for("a.zip"), dest, size=len(ARCHIVE), progress=False)
        assert [r.headers.get("Range") for r in server.requests] == ["bytes=1000-"]
    assert dest.read_bytes() == ARCHIVE


def test_transient_errors_are_retried_then_reported(tmp_path: Path) -> None:
    with LocalServer({"a.zip": ARCHIVE}, flaky=[503, 502]) as server:
        download(server.url_for("a.zip"), tmp_path / "ok.zip", size=len(ARCHIVE), progress=False)
        assert [r.status for r in server.requests] == [503, 502, 200]

    with LocalServer({"a.zip": ARCHIVE}, flaky=[503, 503, 503]) as server:
        with pytest.raises(DataError, match=r"failed after 3 attempts: HTTP 503") as error:
            download(server.url_for("a.zip"), tmp_path / "bad.zip", retries=2, progress=False)
        assert server.url_for("a.zip") in str(error.value)
    assert not (tmp_path / "bad.zip").exists()


def test_verified_file_is_not_downloaded_again(tmp_path: Path) -> None:
    dest = tmp_path / "a.zip"
    dest.write_bytes(ARCHIVE)
    with LocalServer({"a.zip": ARCHIVE}) as server:
        assert download(server.url_for("a.zip"), dest, sha256=SHA256, progress=False) == dest
        assert server.requests == []


def test_progress_bar_goes_to_stderr(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with LocalServer({"a.zip": ARCHIVE}) as server:
        download(server.url_for("a.zip"), tmp_path / "shown.zip", size=len(ARCHIVE), progress=True)
    captured = capsys.readouterr()
    assert "shown.zip" in captured.err and captured.out == ""


@pytest.mark.parametrize(
    ("served", "promise", "problem"),
    [
        (ARCHIVE[:-1] + bytes([ARCHIVE[-1] ^ 0xFF]), {"sha256": SHA256}, f"sha256 mismatch: expected {SHA256}, got"),
        (ARCHIVE, {"md5": "0" * 32}, "md5 mismatch"),
        (ARCHIVE[:-10], {"size": len(ARCHIVE)}, f"size mismatch: expected {len(ARCHIVE)} bytes, got 5990"),
    ],
    ids=["corrupted", "md5", "short"],
)
def test_mismatch_deletes_the_file(tmp_path: Path, served: bytes, promise: dict[str, object], problem: str) -> None:
    with LocalServer({"a.zip": served}) as server, pytest.raises(DataError) as error:
        download(server.url_for("a.zip"), tmp_path / "a.zip", progress=False, **promise)  # type: ignore[arg-type]
    assert problem in str(error.value) and server.url_for("a.zip") in str(error.value)
    assert list(tmp_path.iterdir()) == []


def test_mirrors_are_tried_in_turn(tmp_path: Path) -> None:
    with LocalServer({"mirror/afqmc_public.zip": ARCHIVE}, status={"main/afqmc_public.zip": 403}) as server:
        source = Source(
            url=server.url_for("main/afqmc_public.zip"),
            mirrors=(server.url_for("gone/afqmc_public.zip"), server.url_for("mirror/afqmc_public.zip")),
        )
        path = download_source(source, tmp_path, progress=False)
        statuses = [(r.path.split("/")[0], r.status) for r in server.requests]
    assert statuses == [("main", 403), ("gone", 404), ("mirror", 200)]  # 4xx is not retried
    assert path == tmp_path / "afqmc_public.zip" and path.read_bytes() == ARCHIVE


def test_all_urls_failing_names_each(tmp_path: Path) -> None:
    with LocalServer({}, status=403) as server:
        source = Source(url=server.url_for("a"), mirrors=(server.url_for("b"),))
        with pytest.raises(DataError, match="any of 2 URLs") as error:
            download_source(source, tmp_path, progress=False)
    assert f"{server.url_for('a')}: HTTP 403" in str(error.value)
    assert f"{server.url_for('b')}: HTTP 403" in str(error.value)


def test_clue_data_url_replaces_every_url(monkeypatch: pytest.MonkeyPatch) -> None:
    source = Source(url="https://official.invalid/afqmc public.zip", filename="afqmc public.zip", mirrors=("x",))
    assert source_urls(source) == [source.url, "x"]
    monkeypatch.setenv("CLUE_DATA_URL", "http://127.0.0.1:9/mirror/")
    assert source_urls(source) == ["http://127.0.0.1:9/mirror/afqmc%20public.zip"]


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_full_disk_stops_at_once_and_chains_the_os_error(tmp_path: Path) -> None:
    """``<dest>.part`` is a link to /dev/full: the kernel answers ENOSPC; no mirror can fix that."""
    (tmp_path / "afqmc_public.zip.part").symlink_to("/dev/full")
    with LocalServer({"a.zip": ARCHIVE, "b.zip": ARCHIVE}) as server:
        source = Source(url=server.url_for("a.zip"), mirrors=(server.url_for("b.zip"),))
        with pytest.raises(DataError, match=r"cannot write the download \(No space left on device\)") as error:
            download_source(source, tmp_path, progress=False)
        assert [r.path for r in server.requests] == ["a.zip"]
    assert isinstance(error.value.__cause__, OSError) and error.value.__cause__.errno == errno.ENOSPC
    assert not (tmp_path / "afqmc_public.zip").exists()
