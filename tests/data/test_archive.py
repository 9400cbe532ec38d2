"""clue-data's safe_extract: refuses unsafe or oversized archives, keeps nothing of a failure, cleans up after kills."""

from __future__ import annotations

import errno
import os
import random
import signal
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

from clue_core.plugin import DataError
from clue_data import archive
from clue_data.archive import remove_leftovers, safe_extract

try:
    from tests.support.local_http import zip_bytes
except ModuleNotFoundError:  # plain `pytest` does not put the repository root on sys.path
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from tests.support.local_http import zip_bytes

REPO_ROOT = Path(__file__).resolve().parents[2]
FILLER = random.Random(7).randbytes(6000)  # incompressible
FILES = {
    "train.json": b'{"sentence1": "a", "sentence2": "b", "label": "0"}\n',
    "dev.json": b'{"sentence1": "c", "sentence2": "d", "label": "1"}\n',
    "test.json": b'{"id": 0, "sentence1": "e", "sentence2": "f"}\n' + FILLER,
}
GOOD_ZIP = zip_bytes({**FILES, "__MACOSX/._train.json": b"resource fork", "._dev.json": b"fork", ".DS_Store": b"x"})
KIB, MIB = 1 << 10, 1 << 20


def listing(folder: Path) -> list[str]:
    """Every file and folder below ``folder`` (relative, sorted); [] when it does not exist."""
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*")) if folder.exists() else []


def write_zip(path: Path, entries: dict[str, bytes], **options: object) -> Path:
    path.write_bytes(zip_bytes(entries, **options))  # type: ignore[arg-type]
    return path


def dead_pid() -> int:
    """The pid of a process that has exited and been reaped."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


# ------------------------------------------------------------------ refusing unsafe archives


@pytest.mark.parametrize(
    "damage",
    [lambda z: z[: len(z) // 2], lambda z: z.replace(FILLER[:64], bytes(64), 1)],
    ids=["truncated", "bad-crc"],
)
def test_corrupt_zip_is_refused_without_leftovers(tmp_path: Path, damage) -> None:
    path = tmp_path / "afqmc_public.zip"
    path.write_bytes(damage(GOOD_ZIP))
    with pytest.raises(DataError, match=r"afqmc_public\.zip") as error:
        safe_extract(path, tmp_path / "out" / "afqmc")
    assert "corrupt" in str(error.value)
    assert listing(tmp_path / "out") == []


@pytest.mark.parametrize(
    ("entry", "reason"),
    [
        ("../evil.txt", "outside"),
        ("data/../../evil.txt", "outside"),
        ("/tmp/evil.txt", "absolute"),
        ("C:/evil.txt", "absolute"),
    ],
)
def test_unsafe_entries_are_refused_before_anything_is_written(tmp_path: Path, entry: str, reason: str) -> None:
    path = write_zip(tmp_path / "bad.zip", {"train.json": b"{}\n", entry: b"pwned"})
    with pytest.raises(DataError, match=reason) as error:
        safe_extract(path, tmp_path / "out" / "task")
    assert repr(entry) in str(error.value)
    assert listing(tmp_path / "out") == []
    assert not (tmp_path / "evil.txt").exists()


def test_symlink_entry_is_refused(tmp_path: Path) -> None:
    path = write_zip(tmp_path / "link.zip", {"train.json": b"{}\n"}, symlinks=("dev.json",))
    with pytest.raises(DataError, match=r"'dev\.json': symbolic link"):
        safe_extract(path, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_extract_replaces_previous_folder_and_skips_junk(tmp_path: Path) -> None:
    path = tmp_path / "afqmc_public.zip"
    path.write_bytes(GOOD_ZIP)
    dest = tmp_path / "afqmc"
    dest.mkdir()
    (dest / "stale.json").write_text("old")
    assert safe_extract(path, dest) == dest
    assert listing(dest) == ["dev.json", "test.json", "train.json"]
    assert (dest / "test.json").read_bytes() == FILES["test.json"]
    assert listing(tmp_path) == ["afqmc", "afqmc/dev.json", "afqmc/test.json", "afqmc/train.json", "afqmc_public.zip"]


def test_archive_of_only_junk_is_refused(tmp_path: Path) -> None:
    path = write_zip(tmp_path / "junk.zip", {"__MACOSX/._a": b"x", ".DS_Store": b"y"})
    with pytest.raises(DataError, match="no data files"):
        safe_extract(path, tmp_path / "out")


# ------------------------------------------------------------------ size caps


def test_member_over_the_size_cap_is_refused_and_the_previous_folder_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Today's 200 MB of zeros, scaled down: the cap is patched to 1 MiB and the member is 2 MiB."""
    monkeypatch.setattr(archive, "MAX_MEMBER_BYTES", 1 * MIB)
    path = write_zip(tmp_path / "big.zip", {"train.json": b"{}\n", "zeros.json": bytes(2 * MIB)},
                     compression=zipfile.ZIP_DEFLATED)
    dest = tmp_path / "out" / "afqmc"
    dest.mkdir(parents=True)
    (dest / "train.json").write_text("previous")
    with pytest.raises(DataError, match=r"big\.zip: refusing entry 'zeros\.json': .*more than 1\.0 MiB.*MAX_MEMBER"):
        safe_extract(path, dest)
    assert listing(tmp_path / "out") == ["afqmc", "afqmc/train.json"]  # no staging folder, old data intact
    assert (dest / "train.json").read_text() == "previous"


def test_total_over_the_cap_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(archive, "MAX_TOTAL_BYTES", 100 * KIB)
    entries = {f"part{i}.json": random.Random(i).randbytes(40 * KIB) for i in range(3)}  # each under the cap
    path = write_zip(tmp_path / "many.zip", entries)
    with pytest.raises(DataError, match=r"many\.zip: refusing the archive: .*more than 100\.0 KiB in all"):
        safe_extract(path, tmp_path / "out" / "task")
    assert listing(tmp_path / "out") == []


def test_extreme_compression_ratio_is_refused_but_small_compressible_files_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(archive, "MAX_RATIO", 50)
    monkeypatch.setattr(archive, "RATIO_MIN_BYTES", 512 * KIB)
    small = write_zip(tmp_path / "small.zip", {"dev.json": bytes(256 * KIB)}, compression=zipfile.ZIP_DEFLATED)
    assert (safe_extract(small, tmp_path / "ok") / "dev.json").stat().st_size == 256 * KIB

    bomb = write_zip(tmp_path / "bomb.zip", {"dev.json": bytes(2 * MIB)}, compression=zipfile.ZIP_DEFLATED)
    with pytest.raises(DataError, match=r"bomb\.zip: refusing entry 'dev\.json': it expands more than 50 times"):
        safe_extract(bomb, tmp_path / "out" / "task")
    assert listing(tmp_path / "out") == []


def test_bytes_are_counted_while_writing_not_taken_from_the_header(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the header check out of the way (as with a header that lies), the running count stops the copy."""
    monkeypatch.setattr(archive, "_check_declared_sizes", lambda *args: None)
    monkeypatch.setattr(archive, "MAX_MEMBER_BYTES", 256 * KIB)
    monkeypatch.setattr(archive, "BLOCK_SIZE", 16 * KIB)
    served: list[int] = []
    real_read = zipfile.ZipExtFile.read

    def counting_read(self: zipfile.ZipExtFile, n: int = -1) -> bytes:
        chunk = real_read(self, n)
        served.append(len(chunk))
        return chunk

    monkeypatch.setattr(zipfile.ZipExtFile, "read", counting_read)
    path = write_zip(tmp_path / "big.zip", {"train.json": random.Random(1).randbytes(4 * MIB)})
    with pytest.raises(DataError, match=r"'train\.json': it unpacks to more than 256\.0 KiB"):
        safe_extract(path, tmp_path / "out" / "task")
    assert sum(served) <= 256 * KIB + 16 * KIB  # stopped one block past the cap, not after 4 MiB
    assert listing(tmp_path / "out") == []


# ------------------------------------------------------------------ write failures


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_full_disk_is_a_data_error_chaining_the_os_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The members are written to /dev/full, so the kernel itself answers ENOSPC."""
    real_open = Path.open

    def open_full(self: Path, mode: str = "r", *args: object, **kwargs: object):
        if mode == "wb" and ".staging-" in str(self):
            return real_open(Path("/dev/full"), mode, *args, **kwargs)
        return real_open(self, mode, *args, **kwargs)

    monkeypatch.setattr(Path, "open", open_full)
    path = tmp_path / "afqmc.zip"
    path.write_bytes(GOOD_ZIP)
    with pytest.raises(DataError, match=r"afqmc\.zip: cannot extract into .*No space left on device") as error:
        safe_extract(path, tmp_path / "out" / "afqmc")
    assert isinstance(error.value.__cause__, OSError) and error.value.__cause__.errno == errno.ENOSPC
    assert listing(tmp_path / "out") == []


# ------------------------------------------------------------------ leftovers of killed processes


def test_staging_folders_of_dead_processes_are_removed_on_next_use(tmp_path: Path) -> None:
    host = archive._host()
    dead = tmp_path / f".staging-{dead_pid()}@{host}.0123456789ab.afqmc"
    retired = tmp_path / f".retired-{dead_pid()}@{host}.0123456789ab.cmnli"
    live = tmp_path / f".staging-{os.getpid()}@{host}.0123456789ab.tnews"
    elsewhere = tmp_path / f".staging-{dead_pid()}@another-machine.0123456789ab.csl"
    for folder in (dead, retired, live, elsewhere):
        (folder / "sub").mkdir(parents=True)
        (folder / "sub" / "train.json").write_text("partial")
    path = tmp_path / "afqmc.zip"
    path.write_bytes(GOOD_ZIP)

    safe_extract(path, tmp_path / "afqmc")

    assert not dead.exists() and not retired.exists()
    assert live.exists()  # a live process (this one) may still be writing it
    assert elsewhere.exists()  # a pid from another machine says nothing here
    assert sorted(remove_leftovers(tmp_path)) == []


KILLED_EXTRACTION = textwrap.dedent(
    """
    import sys, zipfile
    from clue_data import archive

    archive.BLOCK_SIZE = 1024
    real_read = zipfile.ZipExtFile.read
    calls = []

    def read(self, n=-1):
        if self.name == "test.json":
            calls.append(n)
            if len(calls) == 3:  # two blocks of test.json are written by now
                print("extracting", flush=True)
                sys.stdin.read()  # wait here until the test kills us
        return real_read(self, n)

    zipfile.ZipExtFile.read = read
    archive.safe_extract(sys.argv[1], sys.argv[2])
    print("finished", flush=True)
    """
)


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL and pid checks are POSIX")
def test_sigkill_mid_extraction_leaves_a_staging_folder_the_next_extraction_removes(tmp_path: Path) -> None:
    path = tmp_path / "afqmc.zip"
    path.write_bytes(GOOD_ZIP)
    cache = tmp_path / "cache"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")]))}
    child = subprocess.Popen(
        [sys.executable, "-c", KILLED_EXTRACTION, str(path), str(cache / "afqmc")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )
    try:
        said = child.stdout.readline()  # returns when the child is mid-extraction, or has died
        assert said == "extracting\n", child.stderr.read() if child.poll() is not None else said
        child.send_signal(signal.SIGKILL)
    finally:
        child.kill()
        child.communicate()
    assert child.returncode == -signal.SIGKILL

    left = [p.name for p in cache.iterdir()]
    assert len(left) == 1 and left[0].startswith(f".staging-{child.pid}@")  # SIGKILL ran no cleanup
    assert listing(cache / left[0])  # with a partly written member in it
    assert not (cache / "afqmc").exists()

    safe_extract(path, cache / "cmnli")  # the next use of the folder

    assert listing(cache) == ["cmnli", "cmnli/dev.json", "cmnli/test.json", "cmnli/train.json"]
