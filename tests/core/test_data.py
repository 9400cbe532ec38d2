"""The data layer: download (verify, resume, retry, mirrors), safe unzip, cache and --data-dir."""

from __future__ import annotations

import concurrent.futures
import hashlib
import io
import random
import re
import sys
import zipfile
from pathlib import Path

import pytest

from clue_core import data
from clue_core.data import (
    download,
    ensure_task_data,
    file_checksums,
    find_file,
    resolve_task_data,
    safe_extract,
)
from clue_core.errors import DataError
from clue_core.hookspecs import hookimpl
from clue_core.specs import DataSource, TaskSpec

try:
    from tests.support.local_http import LocalServer
except ModuleNotFoundError:  # plain `pytest` does not put the repository root on sys.path
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from tests.support.local_http import LocalServer

REAL_SAMPLES = Path(__file__).resolve().parents[2] / ".." / "shared" / "reference" / "real-samples"
OFFICIAL = "https://storage.googleapis.com/cluebenchmark/tasks/"

# Incompressible filler so the archives are a few KB and a dropped connection lands mid-file.
FILLER = random.Random(7).randbytes(6000)


def zip_bytes(entries: dict[str, bytes], *, symlinks: tuple[str, ...] = ()) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_STORED) as archive:
        for name, content in entries.items():
            archive.writestr(zipfile.ZipInfo(name), content)
        for name in symlinks:
            info = zipfile.ZipInfo(name)
            info.external_attr = (0o120777 << 16) | 0x20
            archive.writestr(info, b"/etc/passwd")
    return buffer.getvalue()


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

BASE_TASK = TaskSpec(
    name="afqmc",
    kind="classification",
    description="test task",
    reader="clue_core.data:find_file",
    data_files=("train.json", "dev.json", "test.json"),
)


def task_for(name: str, filename: str, archive: bytes, **source_changes: object) -> TaskSpec:
    """A TaskSpec whose source describes ``archive`` exactly (then ``source_changes`` applied)."""
    source = DataSource(
        url=OFFICIAL + filename,
        filename=filename,
        size=len(archive),
        sha256=hashlib.sha256(archive).hexdigest(),
    )
    return BASE_TASK.replace(name=name, source=source.replace(**source_changes))


AFQMC = task_for("afqmc", "afqmc_public.zip", AFQMC_ZIP)
CMNLI = task_for("cmnli", "cmnli_public.zip", CMNLI_ZIP)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty cache, no mirror override, and no waiting between retries."""
    monkeypatch.setenv("CLUE_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("CLUE_DATA_URL", raising=False)
    monkeypatch.setattr(data, "BACKOFF_SECONDS", 0.0)
    return tmp_path / "home"


def listing(folder: Path) -> list[str]:
    """Every file and folder below ``folder`` (relative, sorted); [] when it does not exist."""
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*")) if folder.exists() else []


# ------------------------------------------------------------------ download, verify, extract


@pytest.mark.parametrize(
    ("task", "archive", "train_at"),
    [(AFQMC, AFQMC_ZIP, "train.json"), (CMNLI, CMNLI_ZIP, "cmnli_public/train.json")],
    ids=["root-layout", "subfolder-layout"],
)
def test_ensure_task_data_downloads_verifies_and_extracts_via_clue_data_url(
    home: Path, monkeypatch: pytest.MonkeyPatch, task: TaskSpec, archive: bytes, train_at: str
) -> None:
    with LocalServer({task.source.filename: archive}) as server:
        monkeypatch.setenv("CLUE_DATA_URL", server.url.rstrip("/"))
        folder = ensure_task_data(task, progress=False)
        again = resolve_task_data(task)  # cached: no second request
        requests = server.requests

    assert folder == again == home / "data" / task.name
    assert [r.path for r in requests] == [task.source.filename]
    assert find_file(folder, "train.json") == folder / train_at
    assert not [p for p in listing(folder) if "MACOSX" in p or p.endswith(".DS_Store") or "/._" in p]
    assert (home / "downloads" / task.source.filename).read_bytes() == archive
    assert listing(home / "downloads") == [task.source.filename]
    assert not [p for p in listing(home / "data") if p.startswith(".")]  # no staging folder left


@pytest.mark.skipif(sys.platform == "win32", reason="download locking uses fcntl")
def test_concurrent_callers_download_once(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ranks of a distributed launch all ask for the data at once; one download serves them all."""
    with LocalServer({"afqmc_public.zip": AFQMC_ZIP}) as server:
        monkeypatch.setenv("CLUE_DATA_URL", server.url)
        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            folders = list(pool.map(lambda _: ensure_task_data(AFQMC, progress=False), range(4)))
        assert len(server.requests) == 1
    assert set(folders) == {home / "data" / "afqmc"}


def test_resume_after_dropped_connection_sends_range(tmp_path: Path, home: Path) -> None:
    dest = tmp_path / "out" / "afqmc_public.zip"
    with LocalServer({"a.zip": AFQMC_ZIP}, drop_after=1000) as server:
        download(server.url_for("a.zip"), dest, size=AFQMC.source.size, sha256=AFQMC.source.sha256, progress=False)
        first, second = server.requests

    assert "Range" not in first.headers and first.status == 200
    assert second.headers["Range"] == "bytes=1000-" and second.status == 206
    assert hashlib.sha256(dest.read_bytes()).hexdigest() == AFQMC.source.sha256
    assert not dest.with_name("afqmc_public.zip.part").exists()


def test_server_ignoring_range_restarts_from_scratch(tmp_path: Path, home: Path) -> None:
    dest = tmp_path / "a.zip"
    with LocalServer({"a.zip": AFQMC_ZIP}, drop_after=1000, ignore_range=True) as server:
        download(server.url_for("a.zip"), dest, sha256=AFQMC.source.sha256, progress=False)
        requests = server.requests

    assert requests[1].headers.get("Range") == "bytes=1000-" and requests[1].status == 200
    assert dest.read_bytes() == AFQMC_ZIP  # not the first 1000 bytes twice


def test_endless_restarts_are_bounded_and_a_later_call_resumes(tmp_path: Path, home: Path) -> None:
    dest = tmp_path / "a.zip"
    with LocalServer({"a.zip": AFQMC_ZIP}, drop_after=1000, drops=100, ignore_range=True) as server:
        with pytest.raises(DataError, match=r"failed after 3 attempts.*1000 bytes received are kept"):
            download(server.url_for("a.zip"), dest, size=len(AFQMC_ZIP), retries=2, progress=False)
        assert len(server.requests) == 3  # restarting to the same point is no progress
    assert dest.with_name("a.zip.part").stat().st_size == 1000

    with LocalServer({"a.zip": AFQMC_ZIP}) as server:
        download(server.url_for("a.zip"), dest, size=len(AFQMC_ZIP), progress=False)
        assert [r.headers.get("Range") for r in server.requests] == ["bytes=1000-"]
    assert dest.read_bytes() == AFQMC_ZIP


def test_transient_errors_are_retried_then_reported(tmp_path: Path, home: Path) -> None:
    with LocalServer({"a.zip": AFQMC_ZIP}, flaky=[503, 502]) as server:
        download(server.url_for("a.zip"), tmp_path / "ok.zip", size=len(AFQMC_ZIP), progress=False)
        assert [r.status for r in server.requests] == [503, 502, 200]

    with LocalServer({"a.zip": AFQMC_ZIP}, flaky=[503, 503, 503]) as server:
        with pytest.raises(DataError, match=r"failed after 3 attempts: HTTP 503") as error:
            download(server.url_for("a.zip"), tmp_path / "bad.zip", retries=2, progress=False)
        assert server.url_for("a.zip") in str(error.value)
    assert not (tmp_path / "bad.zip").exists()


def test_verified_file_is_not_downloaded_again(tmp_path: Path, home: Path) -> None:
    dest = tmp_path / "a.zip"
    dest.write_bytes(AFQMC_ZIP)
    with LocalServer({"a.zip": AFQMC_ZIP}) as server:
        assert download(server.url_for("a.zip"), dest, sha256=AFQMC.source.sha256, progress=False) == dest
        assert server.requests == []


def test_progress_bar_goes_to_stderr(tmp_path: Path, home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with LocalServer({"a.zip": AFQMC_ZIP}) as server:
        download(server.url_for("a.zip"), tmp_path / "shown.zip", size=len(AFQMC_ZIP), progress=True)
    captured = capsys.readouterr()
    assert "shown.zip" in captured.err and captured.out == ""


@pytest.mark.parametrize(
    ("served", "changes", "problem"),
    [
        (AFQMC_ZIP[:-1] + bytes([AFQMC_ZIP[-1] ^ 0xFF]), {}, "sha256 mismatch"),
        (AFQMC_ZIP, {"sha256": None, "md5": "0" * 32}, "md5 mismatch"),
        (AFQMC_ZIP[:-10], {}, "size mismatch"),
    ],
    ids=["corrupted", "md5", "short"],
)
def test_checksum_or_size_mismatch_keeps_nothing(
    home: Path, monkeypatch: pytest.MonkeyPatch, served: bytes, changes: dict[str, object], problem: str
) -> None:
    task = task_for("afqmc", "afqmc_public.zip", AFQMC_ZIP, **changes)
    with LocalServer({"afqmc_public.zip": served}) as server:
        monkeypatch.setenv("CLUE_DATA_URL", server.url)
        with pytest.raises(DataError) as error:
            ensure_task_data(task, progress=False)

    message = str(error.value)
    assert problem in message and server.url_for("afqmc_public.zip") in message
    if problem == "sha256 mismatch":
        assert f"expected {AFQMC.source.sha256}, got {hashlib.sha256(served).hexdigest()}" in message
    if problem == "size mismatch":
        assert f"expected {len(AFQMC_ZIP)} bytes, got {len(served)}" in message
    assert listing(home / "downloads") == []
    assert listing(home / "data") == []


def test_mirrors_are_tried_in_turn(home: Path) -> None:
    with LocalServer({"mirror/afqmc_public.zip": AFQMC_ZIP}, status={"main/afqmc_public.zip": 403}) as server:
        task = task_for(
            "afqmc",
            "afqmc_public.zip",
            AFQMC_ZIP,
            url=server.url_for("main/afqmc_public.zip"),
            mirrors=(server.url_for("gone/afqmc_public.zip"), server.url_for("mirror/afqmc_public.zip")),
        )
        folder = ensure_task_data(task, progress=False)
        statuses = [(r.path.split("/")[0], r.status) for r in server.requests]
    assert statuses == [("main", 403), ("gone", 404), ("mirror", 200)]  # 4xx is not retried
    assert (folder / "train.json").read_bytes() == AFQMC_FILES["train.json"]


def test_all_urls_failing_names_each(home: Path) -> None:
    with LocalServer({}, status=403) as server:
        task = task_for("afqmc", "afqmc_public.zip", AFQMC_ZIP, url=server.url_for("a"), mirrors=(server.url_for("b"),))
        with pytest.raises(DataError, match="any of 2 URLs") as error:
            ensure_task_data(task, progress=False)
    assert f"{server.url_for('a')}: HTTP 403" in str(error.value)
    assert f"{server.url_for('b')}: HTTP 403" in str(error.value)
    assert listing(home / "data") == []


def test_task_without_source_is_a_data_error(home: Path) -> None:
    with pytest.raises(DataError, match="no download source"):
        ensure_task_data(AFQMC.replace(source=None))


# ------------------------------------------------------------------ safe_extract


@pytest.mark.parametrize(
    "damage",
    [lambda z: z[: len(z) // 2], lambda z: z.replace(FILLER[:64], bytes(64), 1)],
    ids=["truncated", "bad-crc"],
)
def test_corrupt_zip_is_refused_without_leftovers(tmp_path: Path, damage) -> None:
    archive = tmp_path / "afqmc_public.zip"
    archive.write_bytes(damage(AFQMC_ZIP))
    with pytest.raises(DataError, match=r"afqmc_public\.zip") as error:
        safe_extract(archive, tmp_path / "out" / "afqmc")
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
    archive = tmp_path / "bad.zip"
    archive.write_bytes(zip_bytes({"train.json": b"{}\n", entry: b"pwned"}))
    with pytest.raises(DataError, match=reason) as error:
        safe_extract(archive, tmp_path / "out" / "task")
    assert repr(entry) in str(error.value)
    assert listing(tmp_path / "out") == []
    assert not (tmp_path / "evil.txt").exists()


def test_symlink_entry_is_refused(tmp_path: Path) -> None:
    archive = tmp_path / "link.zip"
    archive.write_bytes(zip_bytes({"train.json": b"{}\n"}, symlinks=("dev.json",)))
    with pytest.raises(DataError, match=r"'dev\.json': symbolic link"):
        safe_extract(archive, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_extract_replaces_previous_folder_and_skips_junk(tmp_path: Path) -> None:
    archive = tmp_path / "afqmc_public.zip"
    archive.write_bytes(AFQMC_ZIP)
    dest = tmp_path / "afqmc"
    dest.mkdir()
    (dest / "stale.json").write_text("old")
    assert safe_extract(archive, dest) == dest
    assert listing(dest) == ["dev.json", "test.json", "train.json"]
    assert (dest / "test.json").read_bytes() == AFQMC_FILES["test.json"]
    assert listing(tmp_path) == ["afqmc", "afqmc/dev.json", "afqmc/test.json", "afqmc/train.json", "afqmc_public.zip"]


def test_archive_of_only_junk_is_refused(tmp_path: Path) -> None:
    archive = tmp_path / "junk.zip"
    archive.write_bytes(zip_bytes({"__MACOSX/._a": b"x", ".DS_Store": b"y"}))
    with pytest.raises(DataError, match="no data files"):
        safe_extract(archive, tmp_path / "out")


# ------------------------------------------------------------------ resolve_task_data / --data-dir


def test_data_dir_as_the_task_folder(tmp_path: Path, home: Path) -> None:
    folder = tmp_path / "my-afqmc"
    folder.mkdir()
    (folder / "train.json").write_bytes(AFQMC_FILES["train.json"])
    assert resolve_task_data(AFQMC, data_dir=folder) == folder
    assert listing(home) == []


def test_data_dir_as_zip_is_extracted_once_keyed_by_sha256(tmp_path: Path, home: Path) -> None:
    archive = tmp_path / "whatever.zip"
    archive.write_bytes(CMNLI_ZIP)
    folder = resolve_task_data(CMNLI, data_dir=archive)
    assert folder == home / "extracted" / hashlib.sha256(CMNLI_ZIP).hexdigest()
    assert find_file(folder, "dev.json") == folder / "cmnli_public" / "dev.json"
    (folder / "marker").write_text("kept")
    assert resolve_task_data(CMNLI, data_dir=archive) == folder
    assert (folder / "marker").exists()  # reused, not extracted again


def test_data_dir_as_parent_folder_serves_several_tasks(tmp_path: Path, home: Path) -> None:
    parent = tmp_path / "clue"
    (parent / "AFQMC").mkdir(parents=True)
    (parent / "AFQMC" / "train.json").write_bytes(AFQMC_FILES["train.json"])
    (parent / "cmnli_public.zip").write_bytes(CMNLI_ZIP)
    tnews = AFQMC.replace(name="tnews", source=None)

    assert resolve_task_data(AFQMC, data_dir=parent) == parent / "AFQMC"
    cmnli = resolve_task_data(CMNLI, data_dir=parent)
    assert (cmnli / "cmnli_public" / "train.json").is_file()
    with pytest.raises(DataError, match=r"no tnews data here \(looked for tnews/ or tnews.zip or the files"):
        resolve_task_data(tnews, data_dir=parent)  # AFQMC's train.json must not be taken for TNEWS's


@pytest.mark.skipif(not REAL_SAMPLES.is_dir(), reason=f"real CLUE sample zips not found at {REAL_SAMPLES}")
@pytest.mark.parametrize(("task", "nested"), [(AFQMC, "dummy_data"), (CMNLI, "dummy_data/cmnli_public")])
def test_real_official_zips_in_a_parent_folder(home: Path, task: TaskSpec, nested: str) -> None:
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

    task = AFQMC.replace(sample="email:mime")
    assert resolve_task_data(task, sample=True) == Path(email.mime.__path__[0])
    with pytest.raises(DataError, match="not both"):
        resolve_task_data(task, sample=True, data_dir=Path("."))


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
    tampered = AFQMC.replace(name="tampered", source=AFQMC.source.replace(sha256="0" * 64))

    class Plugin:
        @hookimpl
        def clue_tasks(self) -> list[TaskSpec]:
            return [AFQMC, tampered]

    isolated_kernel.register(Plugin(), "data-test-plugin")
    monkeypatch.setattr(data, "BACKOFF_SECONDS", 0.0)
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
    ("archive", "message"),
    [
        (AFQMC_ZIP[: len(AFQMC_ZIP) // 2], "corrupt"),
        (zip_bytes({"train.json": b"{}\n", "../../evil.txt": b"pwned"}), "'../../evil.txt'"),
    ],
    ids=["truncated", "traversal"],
)
def test_cli_download_of_a_served_bad_archive_keeps_nothing(
    run_cli, isolated_kernel, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, archive: bytes, message: str
) -> None:
    """The archive matches its published checksum (a bad official upload), so only extraction can catch it."""
    served = AFQMC.replace(source=
        AFQMC.source.replace(size=len(archive), sha256=hashlib.sha256(archive).hexdigest()))

    class Plugin:
        @hookimpl
        def clue_tasks(self) -> list[TaskSpec]:
            return [served]

    isolated_kernel.register(Plugin(), "served-plugin")
    with LocalServer({"afqmc_public.zip": archive}) as server:
        monkeypatch.setenv("CLUE_DATA_URL", server.url)
        result = run_cli("download", "afqmc", kernel=isolated_kernel)
    home = tmp_path / "clue-home"
    assert result.exit_code == 2 and result.output.startswith("error: ") and message in result.output
    assert "Traceback" not in result.output
    assert not (home / "data" / "afqmc").exists()
    assert not (tmp_path / "evil.txt").exists() and not (home / "evil.txt").exists()
