"""Where a task's files come from: bundled samples, the user's folder or zip, or the cache.

Official archives are downloaded into ``clue_home()/downloads/`` (resumable, verified
against the sizes and checksums the task plugin declares) and unpacked into
``clue_home()/data/<task>/``. Every step writes to a temporary name first and renames
into place, so an interrupted download or extraction never leaves something that later
looks complete. Every failure is a :class:`DataError` with one line the CLI can print.

Stdlib only (plus click for the progress bar, imported when drawn): the CLI imports this
module for ``clue-core list``, which must stay fast.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.resources
import os
import re
import shutil
import stat
import sys
import tempfile
import time
import urllib.parse
import uuid
import zipfile
import zlib
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path, PurePosixPath

from clue_core import __version__
from clue_core.errors import DataError
from clue_core.specs import DataSource, TaskSpec

JUNK_PARTS = ("__MACOSX",)
JUNK_NAMES = (".DS_Store",)

DATA_URL_ENV = "CLUE_DATA_URL"
"""A base URL that replaces the official host; the archive's filename is appended."""

CHUNK_SIZE = 1 << 16
TIMEOUT_SECONDS = 30.0
BACKOFF_SECONDS = 1.0
"""The wait before the first retry; it doubles after each failed attempt (tests set 0)."""

TRANSIENT_HTTP_STATUS = frozenset({408, 425, 429, 500, 502, 503, 504})
USER_AGENT = f"clue-core/{__version__} (+python-urllib)"


def is_junk(path: Path) -> bool:
    """Archive debris (macOS resource forks, Finder files) that readers must ignore."""
    return any(part in JUNK_PARTS for part in path.parts) or path.name in JUNK_NAMES or path.name.startswith("._")


def find_file(root: Path, name: str, *, required: bool = True) -> Path | None:
    """Find ``name`` anywhere below ``root`` (official zips nest differently), skipping junk.

    The shallowest match wins, so ``cmnli_public/train.json`` is found from the zip root.
    """
    root = Path(root)
    direct = root / name
    if direct.is_file():
        return direct
    matches = sorted(
        (p for p in root.rglob(name) if p.is_file() and not is_junk(p.relative_to(root))),
        key=lambda p: (len(p.relative_to(root).parts), str(p)),
    )
    if matches:
        return matches[0]
    if required:
        raise DataError(f"{root}: no file named {name!r} (looked in all sub-folders)")
    return None


def clue_home() -> Path:
    """The cache directory: ``$CLUE_HOME``, else ``$XDG_CACHE_HOME/clue-core``, else ``~/.cache/clue-core``."""
    if os.environ.get("CLUE_HOME"):
        return Path(os.environ["CLUE_HOME"]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "clue-core"


def sample_dir(task: TaskSpec) -> Path:
    """The bundled sample folder of a task (``TaskSpec.sample = "package:relative/dir"``)."""
    if not task.sample:
        raise DataError(f"task {task.name} ships no bundled sample")
    package, _, relative = task.sample.partition(":")
    path = Path(str(importlib.resources.files(package).joinpath(relative)))
    if not path.is_dir():
        raise DataError(f"task {task.name}: bundled sample folder {path} is missing")
    return path


# --------------------------------------------------------------------------- checksums


def _digests(path: Path, algorithms: Iterable[str]) -> dict[str, str]:
    """Hash a file once for several algorithms (archives can be 140 MB; read them once)."""
    hashers = {name: hashlib.new(name) for name in algorithms}
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            for hasher in hashers.values():
                hasher.update(chunk)
    return {name: hasher.hexdigest() for name, hasher in hashers.items()}


def _verification_problem(path: Path, *, size: int | None, sha256: str | None, md5: str | None) -> str | None:
    """Describe how ``path`` differs from what was promised, or ``None`` when it matches."""
    actual_size = path.stat().st_size
    if size is not None and actual_size != size:
        return f"size mismatch: expected {size} bytes, got {actual_size}"
    wanted = {name: value.lower() for name, value in (("sha256", sha256), ("md5", md5)) if value}
    if not wanted:
        return None
    actual = _digests(path, wanted)
    for name, expected in wanted.items():
        if actual[name] != expected:
            return f"{name} mismatch: expected {expected}, got {actual[name]}"
    return None


def file_checksums(paths: Iterable[str | Path]) -> dict[str, str]:
    """sha256 of each file (folders expand to their non-junk files), for the run manifest."""
    result: dict[str, str] = {}
    for given in paths:
        path = Path(given)
        if path.is_dir():
            files = sorted(p for p in path.rglob("*") if p.is_file() and not is_junk(p.relative_to(path)))
        elif path.is_file():
            files = [path]
        else:
            raise DataError(f"{path}: no such file or folder (cannot compute its checksum)")
        for file in files:
            try:
                result[str(file)] = _digests(file, ["sha256"])["sha256"]
            except OSError as exc:
                raise DataError(f"{file}: cannot read ({exc.strerror})") from None
    return result


# --------------------------------------------------------------------------- download


class _TransientError(Exception):
    """A failure worth retrying (dropped connection, 5xx, timeout)."""


class _PermanentError(Exception):
    """A failure retrying the same URL cannot fix (403, 404, a malformed URL)."""


def download(
    url: str,
    dest: Path,
    *,
    size: int | None = None,
    sha256: str | None = None,
    md5: str | None = None,
    retries: int = 3,
    progress: bool = True,
) -> Path:
    """Fetch ``url`` to ``dest`` and verify it; return ``dest``.

    Bytes stream into ``<dest>.part``; an interrupted transfer (in this call or an earlier
    one) resumes with an HTTP ``Range`` request, or starts over when the server ignores it.
    Transient failures are retried ``retries`` times with exponential backoff; an attempt
    that gets further than any before it does not use up a retry. A verified ``dest`` that
    already exists is returned without a request. When size or checksum do not match,
    the file is deleted and a :class:`DataError` names the URL, expected and actual value.
    """
    dest = Path(dest)
    if dest.is_file():
        if _verification_problem(dest, size=size, sha256=sha256, md5=md5) is None:
            return dest
        dest.unlink()  # a stale or damaged copy: fetch it again
    part = dest.with_suffix(dest.suffix + ".part")
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DataError(f"{dest.parent}: cannot create the download folder ({exc.strerror or exc})") from None

    failures = 0
    furthest = _size_or_zero(part)
    while True:
        try:
            _fetch_once(url, part, size=size, progress=progress)
            break
        except OSError as exc:  # network errors are translated inside; this is the local disk
            raise DataError(f"{part}: cannot write the download ({exc.strerror or exc})") from None
        except _PermanentError as exc:
            raise DataError(f"download {url}: {exc}") from None
        except _TransientError as exc:
            reached = _size_or_zero(part)
            if reached > furthest:
                furthest = reached
                failures = 0
            failures += 1
            if failures > retries:
                kept = f" (the {reached} bytes received are kept to resume next time)" if reached else ""
                raise DataError(f"download {url} failed after {failures} attempts: {exc}{kept}") from None
            time.sleep(BACKOFF_SECONDS * 2 ** (failures - 1))

    problem = _verification_problem(part, size=size, sha256=sha256, md5=md5)
    if problem is not None:
        part.unlink()
        raise DataError(f"download {url}: {problem}; the file was deleted")
    os.replace(part, dest)
    return dest


def _size_or_zero(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def _fetch_once(url: str, part: Path, *, size: int | None, progress: bool) -> None:
    """One HTTP request that appends to (or restarts) ``part``; raises on any shortfall."""
    # Imported here: urllib.request costs more at import than all the rest of this module.
    import http.client
    import urllib.error
    import urllib.request

    offset = _size_or_zero(part)
    if size is not None and offset > size:
        part.unlink()  # longer than the real file: it cannot be a prefix of it
        offset = 0
    if size is not None and offset == size:
        return  # already complete; verification decides whether it is right
    headers = {"User-Agent": USER_AGENT, "Accept-Encoding": "identity"}
    if offset:
        headers["Range"] = f"bytes={offset}-"
    try:
        request = urllib.request.Request(url, headers=headers)
        response = urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS)
    except urllib.error.HTTPError as exc:
        exc.close()
        if exc.code == 416 and offset:
            part.unlink()  # the server will not continue our partial file: start over
            raise _TransientError("the server refused to resume (HTTP 416); restarting") from None
        if exc.code in TRANSIENT_HTTP_STATUS:
            raise _TransientError(f"HTTP {exc.code} {exc.reason}") from None
        raise _PermanentError(f"HTTP {exc.code} {exc.reason}") from None
    except ValueError as exc:  # malformed URL or unknown scheme
        raise _PermanentError(str(exc)) from None
    except urllib.error.URLError as exc:
        if isinstance(exc.reason, str) and exc.reason.startswith("unknown url type"):
            raise _PermanentError(exc.reason) from None
        raise _TransientError(f"cannot connect: {exc.reason}") from None
    except (OSError, http.client.HTTPException) as exc:
        raise _TransientError(f"cannot connect: {exc}") from None

    with response:
        mode = "ab"
        if offset and response.status != 206:
            offset, mode = 0, "wb"  # the server ignored Range and sends everything
        elif offset and not _content_range_starts_at(response.headers.get("Content-Range"), offset):
            part.unlink()
            raise _TransientError("the server resumed at the wrong position; restarting")
        length_header = response.headers.get("Content-Length")
        expected = int(length_header) if length_header and length_header.isdigit() else None
        total = offset + expected if expected is not None else size
        received = 0
        with part.open(mode) as out, _progress_bar(total, offset, part.name[: -len(".part")], progress) as advance:
            while True:
                try:
                    chunk = response.read(CHUNK_SIZE)
                except (OSError, http.client.HTTPException) as exc:
                    raise _TransientError(f"connection lost after {offset + received} bytes ({exc})") from None
                if not chunk:
                    break
                out.write(chunk)  # a full disk is not a network problem: it escapes as OSError
                received += len(chunk)
                advance(len(chunk))
        if expected is not None and received < expected:
            raise _TransientError(f"connection closed after {offset + received} of {offset + expected} bytes")


def _content_range_starts_at(header: str | None, offset: int) -> bool:
    match = re.match(r"\s*bytes\s+(\d+)-", header or "")
    return bool(match) and int(match.group(1)) == offset


@contextlib.contextmanager
def _progress_bar(total: int | None, done: int, label: str, enabled: bool) -> Iterator[Callable[[int], object]]:
    """Yield ``advance(n)``; draws click's bar on stderr when enabled and the size is known."""
    if not enabled or not total:
        yield lambda n: None
        return
    import click  # only when a bar is drawn

    with click.progressbar(length=total, label=label, file=sys.stderr, show_pos=False, show_percent=True) as bar:
        if done:
            bar.update(done)
        yield bar.update


def source_urls(source: DataSource) -> list[str]:
    """The URLs to try for an archive, in order.

    ``$CLUE_DATA_URL`` replaces them all (a user's own mirror, or a test server), so that
    nothing is fetched from the official host when it is set.
    """
    base = os.environ.get(DATA_URL_ENV, "").strip()
    if base:
        return [base.rstrip("/") + "/" + urllib.parse.quote(source.filename)]
    return [source.url, *source.mirrors]


def download_source(source: DataSource, directory: Path, *, progress: bool = True) -> Path:
    """Download an archive into ``directory``, trying mirrors in turn; return its path."""
    dest = Path(directory) / source.filename
    problems = []
    for url in source_urls(source):
        try:
            return download(url, dest, size=source.size, sha256=source.sha256, md5=source.md5, progress=progress)
        except DataError as exc:
            problems.append(str(exc))
    if len(problems) == 1:
        raise DataError(problems[0])
    raise DataError(f"could not download {source.filename} from any of {len(problems)} URLs: " + "; ".join(problems))


# --------------------------------------------------------------------------- extraction


def safe_extract(zip_path: Path, dest_dir: Path) -> Path:
    """Unpack ``zip_path`` into ``dest_dir`` (replacing it) and return ``dest_dir``.

    Every entry is checked before anything is written: absolute paths, ``..`` components
    and symlinks are refused. Junk (``__MACOSX/``, ``.DS_Store``, ``._*``) is skipped. The
    files land in a hidden sibling folder that is renamed into place only when complete,
    so a corrupt member or an interruption leaves no half-extracted folder behind.
    """
    zip_path, dest_dir = Path(zip_path), Path(dest_dir)
    try:
        archive = zipfile.ZipFile(zip_path)
    except FileNotFoundError:
        raise DataError(f"{zip_path}: no such file") from None
    except (zipfile.BadZipFile, EOFError, OSError, ValueError) as exc:
        raise DataError(f"{zip_path}: not a readable zip archive (truncated or corrupt?): {exc}") from None
    with archive:
        members = _safe_members(zip_path, archive)
        dest_dir.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{dest_dir.name}.", suffix=".extracting", dir=dest_dir.parent))
        try:
            for info, relative in members:
                target = staging.joinpath(*relative.parts)
                if info.is_dir():
                    target.mkdir(parents=True, exist_ok=True)
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                with archive.open(info) as source, target.open("wb") as out:
                    shutil.copyfileobj(source, out, CHUNK_SIZE)
            _move_into_place(staging, dest_dir)
        except (zipfile.BadZipFile, EOFError, zlib.error, NotImplementedError, RuntimeError) as exc:
            shutil.rmtree(staging, ignore_errors=True)
            raise DataError(f"{zip_path}: corrupt or truncated zip archive: {exc}") from None
        except OSError as exc:
            shutil.rmtree(staging, ignore_errors=True)
            raise DataError(f"{zip_path}: cannot extract into {dest_dir}: {exc}") from None
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
    return dest_dir


def _safe_members(zip_path: Path, archive: zipfile.ZipFile) -> list[tuple[zipfile.ZipInfo, PurePosixPath]]:
    """The entries to extract with their relative paths; refuses the archive on any unsafe entry."""
    members = []
    for info in archive.infolist():
        name = info.filename.replace("\\", "/")
        if name.startswith("/") or re.match(r"[A-Za-z]:", name):
            raise DataError(f"{zip_path}: refusing entry {info.filename!r}: absolute path")
        parts = [part for part in name.split("/") if part not in ("", ".")]
        if ".." in parts:
            raise DataError(f"{zip_path}: refusing entry {info.filename!r}: it points outside the target folder")
        if stat.S_ISLNK(info.external_attr >> 16):
            raise DataError(f"{zip_path}: refusing entry {info.filename!r}: symbolic link")
        if not parts:
            continue
        relative = PurePosixPath(*parts)
        if is_junk(Path(relative)):
            continue
        members.append((info, relative))
    if not any(not info.is_dir() for info, _ in members):
        raise DataError(f"{zip_path}: the archive holds no data files")
    return members


def _move_into_place(staging: Path, dest_dir: Path) -> None:
    """Rename a finished folder to ``dest_dir``, replacing any previous one."""
    if dest_dir.exists():
        retired = dest_dir.with_name(f".{dest_dir.name}.old-{uuid.uuid4().hex[:8]}")
        os.replace(dest_dir, retired)
        os.replace(staging, dest_dir)
        shutil.rmtree(retired, ignore_errors=True)
    else:
        os.replace(staging, dest_dir)


# --------------------------------------------------------------------------- the cache


@contextlib.contextmanager
def _exclusive(name: str) -> Iterator[None]:
    """Serialise downloads of one archive across processes (e.g. ranks of ``accelerate launch``).

    Lock files live in ``clue_home()/locks`` so that ``downloads/`` only ever holds archives.
    Without ``fcntl`` (Windows) this does not lock.
    """
    try:
        import fcntl
    except ImportError:
        yield
        return
    lock_dir = clue_home() / "locks"
    lock_dir.mkdir(parents=True, exist_ok=True)
    with (lock_dir / f"{name}.lock").open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def cached_task_dir(task: TaskSpec) -> Path:
    """Where ``ensure_task_data`` keeps a task's extracted files (it may not exist yet)."""
    return clue_home() / "data" / task.name


def ensure_task_data(task: TaskSpec, *, progress: bool = True) -> Path:
    """The task's extracted official files, downloading and unpacking them on first use."""
    folder = cached_task_dir(task)
    if folder.is_dir():
        return folder
    if task.source is None:
        raise DataError(f"task {task.name} has no download source: get its files yourself and pass --data-dir")
    try:
        with _exclusive(task.source.filename):
            if folder.is_dir():  # another process finished while we waited
                return folder
            archive = download_source(task.source, clue_home() / "downloads", progress=progress)
            safe_extract(archive, folder)
    except PermissionError as exc:
        raise DataError(f"cannot write to the cache {clue_home()} ({exc.strerror}); set CLUE_HOME") from None
    return folder


def resolve_task_data(
    task: TaskSpec,
    *,
    data_dir: Path | None = None,
    sample: bool = False,
    download: bool = True,
) -> Path:
    """The folder a task's reader should read.

    ``sample`` picks the bundled sample. ``data_dir`` may be the task's own extracted
    folder, a zip of it, or a parent folder holding ``<task>/`` (or the official folder or
    zip name), so one ``--data-dir ~/clue`` serves several tasks. Otherwise the cache is
    used, downloading into it unless ``download`` is false.
    """
    if sample:
        if data_dir is not None:
            raise DataError("choose either the bundled sample or a data folder, not both")
        return sample_dir(task)
    if data_dir is not None:
        return _user_data(task, Path(data_dir).expanduser())
    cached = cached_task_dir(task)
    if cached.is_dir():
        return cached
    if not download:
        raise DataError(
            f"no data for task {task.name} in {clue_home()}: run `clue-core download {task.name}` "
            "or pass --data-dir with your copy"
        )
    return ensure_task_data(task)


def _user_data(task: TaskSpec, path: Path) -> Path:
    """Interpret a user-given ``--data-dir`` (folder, zip, or parent of either)."""
    try:
        if not path.exists():
            raise DataError(f"{path}: no such file or folder")
        if path.is_file():
            return _extract_user_zip(path)
        if not os.access(path, os.R_OK | os.X_OK):
            raise DataError(f"{path}: cannot read this folder (permission denied)")
        entries = {entry.name.lower(): entry for entry in path.iterdir() if not is_junk(Path(entry.name))}
        for name in _folder_names(task):
            entry = entries.get(name.lower())
            if entry is not None and entry.is_dir():
                return entry
        for name in _zip_names(task):
            entry = entries.get(name.lower())
            if entry is not None and entry.is_file():
                return _extract_user_zip(entry)
        if _holds_task_files(path, task, entries):
            return path
    except PermissionError as exc:
        raise DataError(f"{exc.filename or path}: cannot read ({exc.strerror})") from None
    expected = [f"{name}/" for name in _folder_names(task)] + list(_zip_names(task))
    if task.data_files:
        expected.append("the files " + ", ".join(task.data_files))
    raise DataError(f"{path}: no {task.name} data here (looked for {' or '.join(expected)})")


def _folder_names(task: TaskSpec) -> tuple[str, ...]:
    names = [task.name]
    if task.source is not None:
        names.append(PurePosixPath(task.source.filename).stem)  # afqmc_public/ when unzipped with -d
    return tuple(dict.fromkeys(names))


def _zip_names(task: TaskSpec) -> tuple[str, ...]:
    names = [f"{task.name}.zip"]
    if task.source is not None:
        names.insert(0, task.source.filename)
    return tuple(dict.fromkeys(names))


def _holds_task_files(path: Path, task: TaskSpec, entries: dict[str, Path]) -> bool:
    """Whether ``path`` itself is the task's folder.

    A data file found in a sub-folder only counts when that sub-folder is named after
    the task (``cmnli_public/``) or is the folder's only entry (an archive's wrapper
    folder), so ``~/clue`` holding just ``tnews/`` is not mistaken for AFQMC's data.
    """
    if not task.data_files:
        return True
    single_wrapper = len(entries) == 1
    for name in task.data_files:
        found = find_file(path, name, required=False)
        if found is None:
            continue
        between = found.relative_to(path).parts[:-1]
        if single_wrapper or all(task.name.lower() in part.lower() for part in between):
            return True
    return False


def _extract_user_zip(zip_path: Path) -> Path:
    """Unpack a user's zip into the cache, keyed by its sha256 so it is unpacked only once."""
    if zip_path.suffix.lower() != ".zip" and not zipfile.is_zipfile(zip_path):
        raise DataError(f"{zip_path}: expected a folder or a .zip archive, and this is not a zip")
    try:
        digest = _digests(zip_path, ["sha256"])["sha256"]
    except OSError as exc:
        raise DataError(f"{zip_path}: cannot read ({exc.strerror})") from None
    folder = clue_home() / "extracted" / digest
    if folder.is_dir():
        return folder
    with _exclusive(f"extract-{digest}"):
        if not folder.is_dir():
            safe_extract(zip_path, folder)
    return folder
