"""Where a task's files come from: bundled samples, the user's folder or zip, or a fetcher.

A user's own zip (``--data-dir x.zip``) is unpacked (:mod:`clue_core.archive`) into
``clue_home()/extracted/<sha256>/``. With no folder and no sample, a fetcher plugin (the
``clue_data_fetchers`` hook, :mod:`clue_core.fetching`; ``clue-data`` downloads the official
archives) brings the task's files. This module decides which folder a task reads, keeps
processes from unpacking the same zip at once, and words failures for the user: every one
is a :class:`DataError` with one line the CLI can print, and a failure to write under the
cache names the cache (and ``$CLUE_HOME``), since that is what the user can change.

Files unpacked from a user's zip are the user's files: :func:`display_path` and
:func:`describe_input_error` show them as ``<their zip>:<member>`` rather than as the
cache copy nobody knows about; when such a file's data is refused, that copy is dropped
as the process ends (unless another run still reads it), since a fixed zip is unpacked
under its new sha256.

Stdlib only: the CLI imports this module for ``clue-core list``, which must stay fast.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import importlib.resources
import os
import zipfile
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from clue_core import archive, fetching
from clue_core.archive import JUNK_NAMES, JUNK_PARTS, is_junk, safe_extract
from clue_core.errors import DataError, InputError

if TYPE_CHECKING:
    from clue_core.fetching import FetcherSpec
    from clue_core.specs import TaskSpec

__all__ = [
    "JUNK_NAMES",
    "JUNK_PARTS",
    "clue_home",
    "describe_input_error",
    "display_path",
    "file_checksums",
    "file_digests",
    "filling_cache",
    "find_file",
    "is_junk",
    "resolve_task_data",
    "safe_extract",
    "sample_dir",
]


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
        raise DataError(f"{display_path(root)}: no file named {name!r} (looked in all sub-folders)")
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


def file_digests(path: Path, algorithms: Iterable[str]) -> dict[str, str]:
    """Hex digests of a file for several algorithms, reading it once (archives can be 140 MB)."""
    hashers = {name: hashlib.new(name) for name in algorithms}
    with Path(path).open("rb") as handle:
        while chunk := handle.read(1 << 20):
            for hasher in hashers.values():
                hasher.update(chunk)
    return {name: hasher.hexdigest() for name, hasher in hashers.items()}


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
                result[str(file)] = file_digests(file, ["sha256"])["sha256"]
            except OSError as exc:
                raise DataError(f"{file}: cannot read ({exc.strerror})") from None
    return result


# --------------------------------------------------------------------------- user zips in messages

_USER_ZIPS: dict[str, Path] = {}
"""Absolute path of a folder unpacked from a user's zip -> that zip, as the user named it."""


def display_path(path: str | Path) -> str:
    """``path`` as the user should see it in a message.

    A file unpacked from a user's ``--data-dir`` zip (in this process) is shown as
    ``<zip>:<member>``, e.g. ``/home/u/tnews_public.zip:tnews_public/dev.json``, and the
    unpacked folder itself as the zip; any other path is returned unchanged.
    """
    absolute = os.path.abspath(path)
    for root, zip_path in _USER_ZIPS.items():
        if absolute == root:
            return str(zip_path)
        if absolute.startswith(root + os.sep):
            return f"{zip_path}:{PurePosixPath(*Path(absolute[len(root) + 1 :]).parts)}"
    return str(path)


def describe_input_error(exc: InputError) -> InputError:
    """``exc`` naming the user's zip and member instead of the cache copy it was read from.

    For the runner: wrap reading a task's data with
    ``except InputError as exc: raise data.describe_input_error(exc) from None`` so a
    message reads ``/home/u/tnews_public.zip:tnews_public/dev.json:12: ...``. Line, field,
    record and reason are kept; ``exc`` itself is returned when its file is not from a zip.
    """
    shown = display_path(exc.path)
    if shown == exc.path:
        return exc
    mark_refused(exc.path)
    return InputError(shown, exc.reason, line=exc.line, field=exc.field, record=exc.record)


_REFUSED: set[str] = set()
"""Folders unpacked from a user's zip whose data was refused; dropped when the process ends."""


def mark_refused(path: str) -> None:
    """Have the copy of the user's zip that ``path`` is in dropped at exit: its data was refused,
    and a fixed zip has another sha256, so nothing would use it again. Not at once: a caller
    such as ``clue-core check`` goes on reading the other files to report their problems too."""
    absolute = os.path.abspath(path)
    for root in _USER_ZIPS:
        if absolute == root or absolute.startswith(root + os.sep):
            if not _REFUSED:
                atexit.register(drop_refused)
            _REFUSED.add(root)
            return


def drop_refused() -> None:
    """Delete the refused copies (see :func:`mark_refused`), except those another run still reads
    (:func:`clue_core.archive.drop_unless_held`); the refusal's message matters more than this."""
    while _REFUSED:
        root = Path(_REFUSED.pop())
        with contextlib.suppress(OSError), _exclusive(f"extract-{root.name}", root.parent.parent):
            archive.drop_unless_held(root)


# --------------------------------------------------------------------------- writing under the cache


@contextlib.contextmanager
def filling_cache(name: str) -> Iterator[None]:
    """Hold the cache's lock on ``name`` (one archive) while unpacking or downloading it under
    :func:`clue_home`; a failure to write there is one :class:`DataError` naming the cache."""
    with _writing_cache(), _exclusive(name):
        yield


@contextlib.contextmanager
def _writing_cache() -> Iterator[None]:
    """Word a failure to write under the cache as such (a full disk is not a bad archive)."""
    try:
        yield
    except OSError as exc:
        raise _cache_write_error(exc) from None
    except DataError as exc:
        if isinstance(exc.__cause__, OSError):  # download and archive chain their write failures
            raise _cache_write_error(exc.__cause__) from None
        raise


def _cache_write_error(exc: OSError) -> DataError:
    reason = exc.strerror or str(exc)
    if os.environ.get("CLUE_HOME"):
        return DataError(f"cannot write to the data cache $CLUE_HOME ({clue_home()}): {reason}")
    return DataError(f"cannot write to the data cache {clue_home()}: {reason} (set CLUE_HOME to use another folder)")


@contextlib.contextmanager
def _exclusive(name: str, home: Path | None = None) -> Iterator[None]:
    """Serialise work on one archive across processes (e.g. ranks of ``accelerate launch``).

    The lock file lives in ``clue_home()/locks`` and its holder deletes it on release, so
    none are left behind, failed archives included. A process that was waiting and then
    locks the deleted file sees that the path no longer names it and locks the new one,
    so deleting never lets two holders in. Without ``fcntl`` (Windows) this does not lock.
    """
    try:
        import fcntl
    except ImportError:
        yield
        return
    lock_dir = (home or clue_home()) / "locks"
    lock_dir.mkdir(parents=True, exist_ok=True)
    path = lock_dir / f"{name}.lock"
    while True:
        handle = path.open("a")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX)
            locked = os.fstat(handle.fileno())
            try:
                current = os.stat(path)
            except FileNotFoundError:
                current = None
        except BaseException:
            handle.close()
            raise
        if current is not None and (current.st_dev, current.st_ino) == (locked.st_dev, locked.st_ino):
            break
        handle.close()  # we locked a file its holder has deleted: try again
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            path.unlink()
        handle.close()  # releases the lock


# --------------------------------------------------------------------------- choosing the folder


def resolve_task_data(
    task: TaskSpec,
    *,
    data_dir: Path | None = None,
    sample: bool = False,
    fetchers: Mapping[str, FetcherSpec] | None = None,
    download: bool = True,
    owners: Mapping[tuple[str, str], str] | None = None,
) -> Path:
    """The folder a task's reader should read.

    ``sample`` picks the bundled sample. ``data_dir`` may be the task's own extracted
    folder, a zip of it, or a parent folder holding ``<task>/`` (or the official folder or
    zip name), so one ``--data-dir ~/clue`` serves several tasks. Otherwise one of
    ``fetchers`` (the kernel's registry of them) brings the files; with ``download`` false it
    only says where they already are; ``owners`` (the kernel's ``owner`` map) lets a fetcher's
    fault name its plugin.
    """
    if sample:
        if data_dir is not None:
            raise DataError("choose either the bundled sample or a data folder, not both")
        return sample_dir(task)
    if data_dir is not None:
        return _user_data(task, Path(data_dir).expanduser())
    fetcher = fetching.choose(task, fetchers or {})
    if not download:
        where = fetching.location(fetcher, task, owners)
        if where is not None and where.is_dir():
            return where
        raise DataError(
            f"no data for task {task.name} in {clue_home()}: run `clue-core download {task.name}` "
            "or pass --data-dir with your copy"
        )
    return fetching.fetch(fetcher, task, progress=True, owners=owners)


def _not_files(folder: Path, names: Iterable[str]) -> str:
    """Why a data file that is there was not read: a folder or a broken link by that name."""
    for name in names:
        entry = folder / name
        if entry.is_dir():
            return f"; {entry} is a folder, not a file"
        if entry.is_symlink() and not entry.exists():
            return f"; {entry} is a broken link (to {os.readlink(entry)})"
    return ""


def _user_data(task: TaskSpec, path: Path) -> Path:
    """Interpret a user-given ``--data-dir`` (folder, zip, or parent of either)."""
    hint = ""
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
        is_task_folder, elsewhere = _holds_task_files(path, task)
        if is_task_folder:
            return path
        if elsewhere is not None and path.name.lower() in {n.lower() for n in _folder_names(task)}:
            return path  # the task's own folder, its files inside a wrapper folder (readers search nested)
        if elsewhere is not None:
            hint = f"; {elsewhere} is not named after {task.name}: pass it as --data-dir if it is {task.name}'s"
        hint = hint or _not_files(path, task.data_files)
    except PermissionError as exc:
        raise DataError(f"{exc.filename or path}: cannot read ({exc.strerror})") from None
    expected = [f"{name}/" for name in _folder_names(task)] + list(_zip_names(task))
    if task.data_files:
        expected.append("the files " + ", ".join(task.data_files))
    raise DataError(f"{path}: no {task.name} data here (looked for {' or '.join(expected)}){hint}")


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


def _holds_task_files(path: Path, task: TaskSpec) -> tuple[bool, Path | None]:
    """Whether ``path`` itself is the task's folder, and else a sub-folder holding such files.

    It is when a data file lies in it directly, or only in sub-folders named after the task
    (``cmnli_public/``). Any other sub-folder may be another task's: a parent folder is
    used for a task only through the task's own folder or zip, so ``~/clue`` holding just
    another task's folder is not taken for this task's data.
    """
    if not task.data_files:
        return True, None
    elsewhere = None
    for name in task.data_files:
        found = find_file(path, name, required=False)
        if found is None:
            continue
        between = found.relative_to(path).parts[:-1]
        if all(task.name.lower() in part.lower() for part in between):
            return True, None
        elsewhere = elsewhere or found.parent
    return False, elsewhere


def _extract_user_zip(zip_path: Path) -> Path:
    """Unpack a user's zip into the cache, keyed by its sha256 so it is unpacked only once."""
    if zip_path.suffix.lower() != ".zip" and not zipfile.is_zipfile(zip_path):
        raise DataError(f"{zip_path}: expected a folder or a .zip archive, and this is not a zip")
    try:
        digest = file_digests(zip_path, ["sha256"])["sha256"]
    except OSError as exc:
        raise DataError(f"{zip_path}: cannot read ({exc.strerror})") from None
    folder = clue_home() / "extracted" / digest
    if not archive.hold(folder):  # held while this process reads it, so a refusal elsewhere keeps it
        with filling_cache(f"extract-{digest}"):
            if not archive.hold(folder):  # else another process finished while we waited
                safe_extract(zip_path, folder)
                archive.hold(folder)
    _USER_ZIPS[os.path.abspath(folder)] = zip_path
    return folder
