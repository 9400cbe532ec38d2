"""The data layer: the cache (download + unpack once, locks, write failures) and --data-dir lookup.

Downloading itself is tested in test_download.py and unpacking in test_archive.py; here
they are driven through ensure_task_data / resolve_task_data as the runner uses them.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import errno
import hashlib
import os
import random
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from clue_core import archive, data
from clue_core import download as download_module
from clue_core.data import (
    describe_input_error,
    display_path,
    ensure_task_data,
    file_checksums,
    find_file,
    resolve_task_data,
)
from clue_core.errors import DataError, InputError
from clue_core.hookspecs import hookimpl
from clue_core.jsonio import iter_jsonl
from clue_core.specs import DataSource as Source  # the real one: the data layer reads its fields

try:
    from tests.support.local_http import LocalServer, zip_bytes
except ModuleNotFoundError:  # plain `pytest` does not put the repository root on sys.path
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from tests.support.local_http import LocalServer, zip_bytes

REAL_SAMPLES = Path(__file__).resolve().parents[2] / ".." / "shared" / "reference" / "real-samples"
OFFICIAL = "https://storage.googleapis.com/cluebenchmark/tasks/"

# Incompressible filler so the archives are a few KB and a dropped connection lands mid-file.
FILLER = random.Random(7).randbytes(6000)

AFQMC_FILES = {
    "train.json": b'{"sentence1": "a", "sentence2": "b", "label": "0"}\n',
    "dev.json": b'{"sentence1": "c", "sentence2": "d", "label": "1"}\n',
    "test.json": b'{"id": 0, "sentence1": "e", "sentence2": "f"}\n' + FILLER,
}
AFQMC_ZIP = zip_bytes(
    {
        **AFQMC_FILES,
        "__MACOSX/._train.json": b"resource fork",
        "._dev.json": b"resource fork",
        ".DS_Store": b"finder",
    }
)
CMNLI_ZIP = zip_bytes(
    {
        "cmnli_public/": b"",
        "cmnli_public/train.json": b'{"sentence1": "a", "sentence2": "b", "label": "neutral"}\n',
        "cmnli_public/dev.json": b'{"sentence1": "c", "sentence2": "d", "label": "-"}\n',
        "cmnli_public/test.json": b'{"id": 0, "sentence1": "e", "sentence2": "f"}\n',
        "cmnli_public/.DS_Store": b"finder",
        "__MACOSX/cmnli_public/._train.json": b"resource fork",
    }
)


@dataclass(frozen=True)
class Task:
    """The attributes of a TaskSpec that the data layer reads (and nothing else)."""

    name: str
    source: Source | None = None
    data_files: tuple[str, ...] = ("train.json", "dev.json", "test.json")
    sample: str | None = None
    test_versions: tuple[object, ...] = ()
    splits: tuple[str, ...] = ("train", "dev")


def task_for(name: str, filename: str, archive_bytes: bytes, **source_changes: object) -> Task:
    """A task whose source describes ``archive_bytes`` exactly (then ``source_changes`` applied)."""
    source = Source(
        url=OFFICIAL + filename,
        filename=filename,
        size=len(archive_bytes),
        sha256=hashlib.sha256(archive_bytes).hexdigest(),
    )
    return Task(name=name, source=dataclasses.replace(source, **source_changes))


AFQMC = task_for("afqmc", "afqmc_public.zip", AFQMC_ZIP)
CMNLI = task_for("cmnli", "cmnli_public.zip", CMNLI_ZIP)
TNEWS = Task(name="tnews", source=Source(url=OFFICIAL + "tnews_public.zip", filename="tnews_public.zip"))


def registered(task: Task):
    """The real TaskSpec the kernel needs for CLI tests, built from a test task."""
    from clue_core.specs import DataSource, TaskSpec

    assert task.source is not None
    source = DataSource(url=task.source.url, filename=task.source.filename, size=task.source.size,
                        sha256=task.source.sha256)
    return TaskSpec(name=task.name, kind="classification", description="test task",
                    reader="clue_core.data:find_file", data_files=task.data_files, source=source)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty cache, no mirror override, no waiting between retries, no remembered user zips."""
    monkeypatch.setenv("CLUE_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("CLUE_DATA_URL", raising=False)
    monkeypatch.setattr(download_module, "BACKOFF_SECONDS", 0.0)
    monkeypatch.setattr(data, "_USER_ZIPS", {})
    return tmp_path / "home"


def listing(folder: Path) -> list[str]:
    """Every file and folder below ``folder`` (relative, sorted); [] when it does not exist."""
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*")) if folder.exists() else []


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
        again = resolve_task_data(task)  # cached: no second request
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


# ------------------------------------------------------------------ resolve_task_data / --data-dir


def test_data_dir_as_the_task_folder(tmp_path: Path, home: Path) -> None:
    folder = tmp_path / "my-afqmc"
    folder.mkdir()
    (folder / "train.json").write_bytes(AFQMC_FILES["train.json"])
    assert resolve_task_data(AFQMC, data_dir=folder) == folder
    assert listing(home) == []


def test_data_dir_as_zip_is_extracted_once_keyed_by_sha256(tmp_path: Path, home: Path) -> None:
    user_zip = tmp_path / "whatever.zip"
    user_zip.write_bytes(CMNLI_ZIP)
    folder = resolve_task_data(CMNLI, data_dir=user_zip)
    assert folder == home / "extracted" / hashlib.sha256(CMNLI_ZIP).hexdigest()
    assert find_file(folder, "dev.json") == folder / "cmnli_public" / "dev.json"
    (folder / "marker").write_text("kept")
    assert resolve_task_data(CMNLI, data_dir=user_zip) == folder
    assert (folder / "marker").exists()  # reused, not extracted again
    assert listing(home / "locks") == []


def test_data_dir_as_parent_folder_serves_several_tasks(tmp_path: Path, home: Path) -> None:
    parent = tmp_path / "clue"
    (parent / "AFQMC").mkdir(parents=True)
    (parent / "AFQMC" / "train.json").write_bytes(AFQMC_FILES["train.json"])
    (parent / "cmnli_public.zip").write_bytes(CMNLI_ZIP)
    tnews = Task(name="tnews")

    assert resolve_task_data(AFQMC, data_dir=parent) == parent / "AFQMC"
    cmnli = resolve_task_data(CMNLI, data_dir=parent)
    assert (cmnli / "cmnli_public" / "train.json").is_file()
    with pytest.raises(DataError, match=r"no tnews data here \(looked for tnews/ or tnews.zip or the files"):
        resolve_task_data(tnews, data_dir=parent)  # AFQMC's train.json must not be taken for TNEWS's


def test_parent_holding_only_another_tasks_folder_is_not_that_data(tmp_path: Path, home: Path) -> None:
    parent = tmp_path / "clue"
    (parent / "tnews").mkdir(parents=True)
    for name, content in AFQMC_FILES.items():
        (parent / "tnews" / name).write_bytes(content)

    with pytest.raises(DataError) as error:
        resolve_task_data(AFQMC, data_dir=parent)
    assert str(error.value).startswith(f"{parent}: no afqmc data here (looked for afqmc/ or afqmc_public/ or ")
    assert f"{parent / 'tnews'} is not named after afqmc: pass it as --data-dir" in str(error.value)
    assert resolve_task_data(TNEWS, data_dir=parent) == parent / "tnews"
    assert resolve_task_data(AFQMC, data_dir=parent / "tnews") == parent / "tnews"  # the user's explicit choice


def test_sub_folder_named_after_the_task_still_counts(tmp_path: Path, home: Path) -> None:
    folder = tmp_path / "download"
    (folder / "AFQMC-v1.0").mkdir(parents=True)
    (folder / "AFQMC-v1.0" / "train.json").write_bytes(AFQMC_FILES["train.json"])
    assert resolve_task_data(AFQMC, data_dir=folder) == folder
    assert find_file(folder, "train.json") == folder / "AFQMC-v1.0" / "train.json"


@pytest.mark.skipif(not REAL_SAMPLES.is_dir(), reason=f"real CLUE sample zips not found at {REAL_SAMPLES}")
@pytest.mark.parametrize(("task", "nested"), [(AFQMC, "dummy_data"), (CMNLI, "dummy_data/cmnli_public")])
def test_real_official_zips_in_a_parent_folder(home: Path, task: Task, nested: str) -> None:
    folder = resolve_task_data(task, data_dir=REAL_SAMPLES)  # finds <task>.zip there and unpacks it
    assert folder.parent == home / "extracted"
    for name in task.data_files:
        assert find_file(folder, name) == folder / nested / name
    assert not [p for p in listing(folder) if "MACOSX" in p or "DS_Store" in p]


def test_data_dir_as_unzipped_official_folder_name(tmp_path: Path, home: Path) -> None:
    (tmp_path / "cmnli_public").mkdir()
    (tmp_path / "cmnli_public" / "train.json").write_text("{}\n")
    assert resolve_task_data(CMNLI, data_dir=tmp_path) == tmp_path / "cmnli_public"


def test_data_dir_problems_name_the_path(tmp_path: Path, home: Path) -> None:
    missing = tmp_path / "nope"
    with pytest.raises(DataError, match=re.escape(f"{missing}: no such file or folder")):
        resolve_task_data(AFQMC, data_dir=missing)
    text = tmp_path / "notes.txt"
    text.write_text("hello")
    with pytest.raises(DataError, match="not a zip"):
        resolve_task_data(AFQMC, data_dir=text)
    broken = tmp_path / "broken.zip"
    broken.write_bytes(AFQMC_ZIP[:100])
    with pytest.raises(DataError, match=r"broken\.zip: not a readable zip"):
        resolve_task_data(AFQMC, data_dir=broken)


def test_no_download_without_cache_says_what_to_do(home: Path) -> None:
    with pytest.raises(DataError, match="run `clue-core download afqmc` or pass --data-dir"):
        resolve_task_data(AFQMC, download=False)
    (home / "data" / "afqmc").mkdir(parents=True)
    assert resolve_task_data(AFQMC, download=False) == home / "data" / "afqmc"


def test_sample_uses_the_bundled_folder(home: Path) -> None:
    import email.mime

    task = dataclasses.replace(AFQMC, sample="email:mime")
    assert resolve_task_data(task, sample=True) == Path(email.mime.__path__[0])
    with pytest.raises(DataError, match="not both"):
        resolve_task_data(task, sample=True, data_dir=Path("."))


# ------------------------------------------------------------------ errors in a user's zip name the zip


TNEWS_DEV = b'{"sentence": "ok", "label": "100"}\n' * 11 + b'{"sentence": broken}\n'
TNEWS_ZIP = zip_bytes({"tnews_public/train.json": b"{}\n", "tnews_public/dev.json": TNEWS_DEV})


def test_errors_in_a_user_zip_name_the_zip_and_member(tmp_path: Path, home: Path) -> None:
    user_zip = tmp_path / "tnews_public.zip"
    user_zip.write_bytes(TNEWS_ZIP)
    folder = resolve_task_data(TNEWS, data_dir=user_zip)
    dev = find_file(folder, "dev.json")
    with pytest.raises(InputError) as caught:
        list(iter_jsonl(dev))
    assert str(caught.value).startswith(f"{dev}:12: ")  # what the reader knows: the cache copy

    described = describe_input_error(caught.value)
    assert str(described) == f"{user_zip}:tnews_public/dev.json:12: {caught.value.reason}"
    assert (described.path, described.line, described.reason) == (
        f"{user_zip}:tnews_public/dev.json", 12, caught.value.reason
    )
    assert display_path(folder) == str(user_zip)
    with pytest.raises(DataError, match=re.escape(f"{user_zip}: no file named 'test.json'")):
        find_file(folder, "test.json")


def test_user_zip_mapping_survives_reuse_and_keeps_field_and_record(tmp_path: Path, home: Path) -> None:
    parent = tmp_path / "clue"
    parent.mkdir()
    (parent / "tnews_public.zip").write_bytes(TNEWS_ZIP)
    resolve_task_data(TNEWS, data_dir=parent)
    data._USER_ZIPS.clear()  # as in a new process: the unpacked copy is reused from the cache
    folder = resolve_task_data(TNEWS, data_dir=parent)
    error = InputError(folder / "tnews_public" / "dev.json", "missing", line=3, field="label", record="id 7")
    assert str(describe_input_error(error)) == (
        f"{parent / 'tnews_public.zip'}:tnews_public/dev.json:3 (id 7): field 'label': missing"
    )


def test_errors_in_other_files_are_unchanged(tmp_path: Path, home: Path) -> None:
    error = InputError(tmp_path / "dev.json", "missing", line=3, field="label")
    assert describe_input_error(error) is error
    assert display_path(tmp_path / "dev.json") == str(tmp_path / "dev.json")


# ------------------------------------------------------------------ find_file, file_checksums


def test_find_file_skips_junk_and_prefers_the_shallowest(tmp_path: Path) -> None:
    for relative in ("__MACOSX/train.json", "a/b/train.json", "a/b/c/train.json", "x/.DS_Store"):
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text(relative)
    assert find_file(tmp_path, "train.json") == tmp_path / "a" / "b" / "train.json"
    assert find_file(tmp_path, ".DS_Store", required=False) is None
    with pytest.raises(DataError, match=r"no file named 'dev\.json'"):
        find_file(tmp_path, "dev.json")


def test_file_checksums(tmp_path: Path) -> None:
    (tmp_path / "d" / "__MACOSX").mkdir(parents=True)
    (tmp_path / "d" / "train.json").write_bytes(b"abc")
    (tmp_path / "d" / "__MACOSX" / "._train.json").write_bytes(b"junk")
    (tmp_path / "one.json").write_bytes(b"xyz")
    sums = file_checksums([tmp_path / "d", str(tmp_path / "one.json")])
    assert sums == {
        str(tmp_path / "d" / "train.json"): hashlib.sha256(b"abc").hexdigest(),
        str(tmp_path / "one.json"): hashlib.sha256(b"xyz").hexdigest(),
    }
    with pytest.raises(DataError, match=r"missing\.json"):
        file_checksums([tmp_path / "missing.json"])


# ------------------------------------------------------------------ through the CLI


def test_cli_download_uses_clue_data_url_and_reports_mismatch_in_one_line(
    run_cli, isolated_kernel, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tampered = task_for("tampered", "afqmc_public.zip", AFQMC_ZIP, sha256="0" * 64)

    class Plugin:
        @hookimpl
        def clue_tasks(self) -> list:
            return [registered(AFQMC), registered(tampered)]

    isolated_kernel.register(Plugin(), "data-test-plugin")
    monkeypatch.setattr(download_module, "BACKOFF_SECONDS", 0.0)
    with LocalServer({"afqmc_public.zip": AFQMC_ZIP}) as server:
        monkeypatch.setenv("CLUE_DATA_URL", server.url)
        ok = run_cli("download", "afqmc", kernel=isolated_kernel)
        bad = run_cli("download", "tampered", kernel=isolated_kernel)

    home = tmp_path / "clue-home"  # where the run_cli fixture points CLUE_HOME
    assert ok.exit_code == 0, ok.output
    assert ok.output.strip() == f"afqmc: {home / 'data' / 'afqmc'}"
    assert (home / "data" / "afqmc" / "dev.json").read_bytes() == AFQMC_FILES["dev.json"]
    assert bad.exit_code == 2
    assert bad.output.count("\n") == 1 and bad.output.startswith("error: download ")
    assert f"sha256 mismatch: expected {'0' * 64}, got {AFQMC.source.sha256}" in bad.output
    assert "Traceback" not in bad.output


@pytest.mark.skipif(not REAL_SAMPLES.is_dir(), reason=f"real CLUE sample zips not found at {REAL_SAMPLES}")
def test_cli_run_with_a_parent_data_dir_of_official_zips(run_cli, tmp_path: Path) -> None:
    result = run_cli(
        "run", "afqmc", "cmnli", "--model", "baseline", "--data-dir", REAL_SAMPLES, "-o", tmp_path / "runs"
    )
    assert result.exit_code == 0, result.output
    for task in ("afqmc", "cmnli"):
        assert (tmp_path / "runs" / task / "submission" / f"{task}_predict.json").is_file()
    missing = run_cli("run", "afqmc", "--model", "baseline", "--data-dir", tmp_path / "nope")
    assert missing.exit_code == 2
    assert f"error: {tmp_path / 'nope'}: no such file or folder" in missing.output


@pytest.mark.parametrize(
    ("archive_bytes", "message"),
    [
        (AFQMC_ZIP[: len(AFQMC_ZIP) // 2], "corrupt"),
        (zip_bytes({"train.json": b"{}\n", "../../evil.txt": b"pwned"}), "'../../evil.txt'"),
    ],
    ids=["truncated", "traversal"],
)
def test_cli_download_of_a_served_bad_archive_keeps_nothing(
    run_cli, isolated_kernel, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, archive_bytes: bytes, message: str
) -> None:
    """The archive matches its published checksum (a bad official upload), so only extraction can catch it."""
    served = task_for("afqmc", "afqmc_public.zip", archive_bytes)

    class Plugin:
        @hookimpl
        def clue_tasks(self) -> list:
            return [registered(served)]

    isolated_kernel.register(Plugin(), "served-plugin")
    with LocalServer({"afqmc_public.zip": archive_bytes}) as server:
        monkeypatch.setenv("CLUE_DATA_URL", server.url)
        result = run_cli("download", "afqmc", kernel=isolated_kernel)
    home = tmp_path / "clue-home"
    assert result.exit_code == 2 and result.output.startswith("error: ") and message in result.output
    assert "Traceback" not in result.output
    assert not (home / "data" / "afqmc").exists()
    assert listing(home / "locks") == []
    assert not (tmp_path / "evil.txt").exists() and not (home / "evil.txt").exists()



def test_the_tasks_own_folder_with_its_files_in_a_wrapper_folder_is_read(tmp_path):
    """The real sample zips unpack to <task>/dummy_data/…: passing <task>/ works, as the zip does."""
    from clue_core.data import resolve_task_data
    from clue_core.plugin import TaskSpec

    task = TaskSpec("afqmc", "classification", "d", "m:r", data_files=("train.json", "dev.json"))
    inner = tmp_path / "afqmc" / "dummy_data"
    inner.mkdir(parents=True)
    for name in ("train.json", "dev.json"):
        (inner / name).write_text("{}\n")
    assert resolve_task_data(task, data_dir=tmp_path / "afqmc") == tmp_path / "afqmc"
    other = tmp_path / "parent"
    (other / "tnews").mkdir(parents=True)
    (other / "tnews" / "train.json").write_text("{}\n")
    import pytest

    from clue_core.errors import DataError

    with pytest.raises(DataError, match="no afqmc data here"):
        resolve_task_data(task, data_dir=other)
