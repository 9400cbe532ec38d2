"""Unpack zip archives without trusting them: no escapes, no bombs, no half-written folders.

The archives come from the network or from a user, so each one is checked before and
while it is unpacked:

* entries with absolute paths, ``..`` components or symlinks are refused before anything
  is written (a zip may not write outside its folder);
* sizes are capped (:data:`MAX_MEMBER_BYTES`, :data:`MAX_TOTAL_BYTES`, :data:`MAX_RATIO`, and the
  number of entries, :data:`MAX_ENTRIES`):
  the official CLUE archives unpack to under 1.5 GB, so anything far larger is a damaged
  or hostile file that would otherwise fill the disk. The caps are checked against the
  sizes the zip declares and again against the bytes actually written, since a header
  can lie;
* files land in a *staging* folder next to the destination and are renamed into place
  only when all of them are written. Staging folders are named
  ``.staging-<pid>@<host>.<token>.<name>`` so that one left behind by a killed process
  (``SIGKILL`` runs no cleanup) is recognised and removed by the next extraction there.

A folder unpacked for a user's zip is dropped again when its data is refused, but not
while another process reads it: readers :func:`hold` it (a shared ``flock`` on the folder
itself, released when the process ends, killed or not) and :func:`drop_unless_held` only
removes a folder no other process holds.

Junk that archivers add (``__MACOSX/``, ``.DS_Store``, ``._*``: the kernel's ``is_junk``, which
the readers ignore too) is not unpacked. Failures are :class:`DataError`; a failure to *write*
chains the ``OSError`` as ``__cause__`` so that a caller owning the folder (the data cache)
can say whose folder it is.
"""

from __future__ import annotations

import errno
import os
import re
import shutil
import stat
import zipfile
import zlib
from pathlib import Path, PurePosixPath
from typing import IO

from clue_core.plugin import DataError, is_junk

MAX_TOTAL_BYTES = 4 << 30
"""The most one archive may unpack to (the largest official CLUE archive is under 1.5 GB)."""
MAX_MEMBER_BYTES = 2 << 30
"""The most one file in an archive may unpack to."""
MAX_RATIO = 1000
"""A member expanding more than this many times its compressed size is refused as a zip bomb..."""
RATIO_MIN_BYTES = 8 << 20
"""...once it is larger than this (small files of repeated bytes legitimately compress well)."""

MAX_ENTRIES = 100_000
"""The most entries one archive may unpack (the official CLUE archives hold under 20): a zip of empty
files is small (23 MB for 200,000) yet would use up the file system's inodes."""

BLOCK_SIZE = 1 << 20

_STAGING = ".staging-"
_RETIRED = ".retired-"
_LEFTOVER = re.compile(r"^\.(?:staging|retired)-(\d+)@([A-Za-z0-9_-]*)\.")


def safe_extract(zip_path: Path, dest_dir: Path) -> Path:
    """Unpack ``zip_path`` into ``dest_dir`` (replacing it) and return ``dest_dir``.

    Unsafe entries and declared sizes over the caps refuse the archive before anything is
    written; sizes are counted again while writing. On any failure nothing of this
    extraction is kept and a previous ``dest_dir`` is left as it was.
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
        _check_declared_sizes(zip_path, members)
        try:
            dest_dir.parent.mkdir(parents=True, exist_ok=True)
            remove_leftovers(dest_dir.parent)
            staging = dest_dir.parent / f"{_STAGING}{_owner()}.{os.urandom(6).hex()}.{dest_dir.name}"
            staging.mkdir()
        except OSError as exc:
            raise DataError(f"{zip_path}: cannot extract into {dest_dir} ({exc.strerror or exc})") from exc
        try:
            total = 0
            for info, relative in members:
                target = staging.joinpath(*relative.parts)
                if info.is_dir():
                    target.mkdir(parents=True, exist_ok=True)
                    continue
                total += _unpack_file(zip_path, archive, info, target, already=total)
            _move_into_place(staging, dest_dir)
        except (zipfile.BadZipFile, EOFError, zlib.error, NotImplementedError, RuntimeError) as exc:
            raise DataError(f"{zip_path}: corrupt or truncated zip archive: {exc}") from None
        except OSError as exc:
            raise DataError(f"{zip_path}: cannot extract into {dest_dir} ({exc.strerror or exc})") from exc
        finally:
            shutil.rmtree(staging, ignore_errors=True)  # gone already when renamed into place
    return dest_dir


def intact(zip_path: Path, folder: Path) -> bool:
    """Whether ``folder``, unpacked from ``zip_path`` earlier, still holds each of its files at the size the
    zip gives it (a stat per file, no reading): a copy that lost or cut short a file is not the zip's."""
    try:
        with zipfile.ZipFile(zip_path) as archive:
            members = _safe_members(zip_path, archive)
        return all(info.is_dir() or folder.joinpath(*relative.parts).stat().st_size == info.file_size
                   for info, relative in members)
    except (OSError, zipfile.BadZipFile, EOFError, ValueError, DataError):
        return False


def _safe_members(zip_path: Path, archive: zipfile.ZipFile) -> list[tuple[zipfile.ZipInfo, PurePosixPath]]:
    """The entries to extract with their relative paths; refuses the archive on any unsafe entry."""
    members = []
    files: set[PurePosixPath] = set()
    folders: set[PurePosixPath] = set()
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
        if is_junk(relative):
            continue
        _check_collision(zip_path, info, relative, files, folders)
        members.append((info, relative))
    if not any(not info.is_dir() for info, _ in members):
        raise DataError(f"{zip_path}: the archive holds no data files")
    if len(members) > MAX_ENTRIES:
        raise DataError(f"{zip_path}: refusing the archive: it holds {len(members):,} entries, more than "
                        f"{MAX_ENTRIES:,} (clue_data.archive.MAX_ENTRIES); no CLUE archive holds that many")
    return members


def _check_collision(zip_path: Path, info: zipfile.ZipInfo, relative: PurePosixPath, files: set[PurePosixPath],
                     folders: set[PurePosixPath]) -> None:
    """Refuse an entry that cannot be unpacked beside the ones before it: a file named twice (which
    copy a reader sees depends on the tool, so the zip's content is ambiguous) or a path that is a
    file for one entry and a folder for another. Without this, the second write fails half-way with
    an ``OSError`` that reads as the cache's fault (``File exists``). Records the entry's paths."""
    def refuse(why: str) -> DataError:
        return DataError(f"{zip_path}: refusing entry {info.filename!r}: {why}")

    above = list(relative.parents)[:-1]  # its folders, without the archive's root
    if info.is_dir():
        above.insert(0, relative)
    if clash := next((folder for folder in above if folder in files), None):
        raise refuse(f"'{clash}' is a file in the archive, not a folder")
    if not info.is_dir():
        if relative in files:
            raise refuse("the archive holds it twice")
        if relative in folders:
            raise refuse(f"'{relative}' is a folder in the archive, not a file")
        files.add(relative)
    folders.update(above)


def _check_declared_sizes(zip_path: Path, members: list[tuple[zipfile.ZipInfo, PurePosixPath]]) -> None:
    """Refuse, before writing, an archive whose own headers announce too much data."""
    total = 0
    for info, _ in members:
        _check_member(zip_path, info, info.file_size)
        total += info.file_size
        if total > MAX_TOTAL_BYTES:
            raise DataError(_total_message(zip_path))


_NAME_ERRORS = {errno.ENAMETOOLONG, errno.EILSEQ, errno.EINVAL}
"""Failures to create a file that its name causes (the entry's fault, not the disk's or the cache's)."""


def _unpack_file(zip_path: Path, archive: zipfile.ZipFile, info: zipfile.ZipInfo, target: Path, *, already: int
                 ) -> int:
    """Write one file member to ``target``; a name the file system cannot hold is the entry's error."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        out = target.open("wb")
    except OSError as exc:
        if exc.errno in _NAME_ERRORS:
            raise DataError(f"{zip_path}: cannot unpack entry {info.filename!r}: {exc.strerror or exc}") from None
        raise
    with archive.open(info) as source, out:
        return _copy_capped(zip_path, info, source, out, already=already)


def _copy_capped(zip_path: Path, info: zipfile.ZipInfo, source: IO[bytes], out: IO[bytes], *, already: int) -> int:
    """Copy one member, counting the bytes really produced; stop as soon as a cap is passed."""
    written = 0
    while chunk := source.read(BLOCK_SIZE):
        written += len(chunk)
        _check_member(zip_path, info, written)
        if already + written > MAX_TOTAL_BYTES:
            raise DataError(_total_message(zip_path))
        out.write(chunk)
    return written


def _check_member(zip_path: Path, info: zipfile.ZipInfo, size: int) -> None:
    if size > MAX_MEMBER_BYTES:
        raise DataError(
            f"{zip_path}: refusing entry {info.filename!r}: it unpacks to more than {_size(MAX_MEMBER_BYTES)} "
            "(clue_data.archive.MAX_MEMBER_BYTES); no CLUE file is that large"
        )
    if size > RATIO_MIN_BYTES and size > MAX_RATIO * max(info.compress_size, 1):
        raise DataError(
            f"{zip_path}: refusing entry {info.filename!r}: it expands more than {MAX_RATIO} times "
            f"({_size(info.compress_size)} to over {_size(size)}), as zip bombs do"
        )


def _total_message(zip_path: Path) -> str:
    return (
        f"{zip_path}: refusing the archive: it unpacks to more than {_size(MAX_TOTAL_BYTES)} in all "
        "(clue_data.archive.MAX_TOTAL_BYTES); no CLUE archive is that large"
    )


def _size(n: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} bytes"


def _move_into_place(staging: Path, dest_dir: Path) -> None:
    """Rename a finished folder to ``dest_dir``, replacing any previous one."""
    if dest_dir.exists():
        retired = _retired_name(dest_dir)
        os.replace(dest_dir, retired)
        os.replace(staging, dest_dir)
        shutil.rmtree(retired, ignore_errors=True)
    else:
        os.replace(staging, dest_dir)


def _retired_name(folder: Path) -> Path:
    """A name to move ``folder`` to before deleting it (one left by a kill goes with :func:`remove_leftovers`)."""
    return folder.with_name(f"{_RETIRED}{_owner()}.{os.urandom(6).hex()}.{folder.name}")


# --------------------------------------------------------------------------- folders in use

_HELD: dict[str, int] = {}
"""Folders this process reads: absolute path -> a descriptor holding a shared ``flock`` on it."""


def hold(folder: Path) -> bool:
    """Mark ``folder`` as read by this process until it ends; False if there is no such folder.

    The shared lock is taken on the folder's own descriptor and checked to still be the
    folder at that path, so one that was being dropped meanwhile is not taken for it.
    """
    key = os.path.abspath(folder)
    if key in _HELD:
        return True
    try:
        import fcntl
    except ImportError:  # Windows: nothing to lock with; folders are then never held
        return os.path.isdir(key)
    try:
        fd = os.open(key, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)
        current = os.stat(key)
        locked = os.fstat(fd)
        same = (current.st_dev, current.st_ino) == (locked.st_dev, locked.st_ino)
    except OSError:
        same = False
    if not same:
        os.close(fd)
        return False
    _HELD[key] = fd
    return True


def drop_unless_held(folder: Path) -> bool:
    """Delete ``folder`` unless another process holds it; this process's hold ends either way.

    The caller keeps others from unpacking into the same path meanwhile (the data
    cache's per-archive lock).
    """
    key = os.path.abspath(folder)
    fd = _HELD.pop(key, None)
    try:
        import fcntl
    except ImportError:
        fcntl = None  # type: ignore[assignment]
    if fd is None and fcntl is not None:
        try:
            fd = os.open(key, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        except OSError:
            return False
    try:
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:  # another process reads it: the last one to refuse it drops it
                return False
        retired = _retired_name(Path(key))
        os.replace(key, retired)
        shutil.rmtree(retired, ignore_errors=True)
        return True
    finally:
        if fd is not None:
            os.close(fd)


# --------------------------------------------------------------------------- leftovers of killed processes


def _host() -> str:
    """This machine's name, as safe file-name characters (``os.uname`` avoids importing socket)."""
    name = os.uname().nodename if hasattr(os, "uname") else os.environ.get("COMPUTERNAME", "")
    return re.sub(r"[^A-Za-z0-9_-]", "_", name)[:64]


def _owner() -> str:
    """``<pid>@<host>``: who made a staging folder (a cache may be shared by several machines)."""
    return f"{os.getpid()}@{_host()}"


def _pid_alive(pid: int) -> bool:
    if os.name == "nt":
        return True  # os.kill(pid, 0) would send CTRL_C_EVENT there; keep the folder rather than guess
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # EPERM: alive, owned by someone else
    return True


def remove_leftovers(folder: Path) -> list[Path]:
    """Delete staging and retired folders in ``folder`` whose process is gone; return them.

    Only folders made on this host are judged (a pid means nothing on another machine);
    those of live processes, this one included, are in use and kept.
    """
    removed = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    host = _host()
    for entry in entries:
        match = _LEFTOVER.match(entry.name)
        if match is None or match.group(2) != host or _pid_alive(int(match.group(1))):
            continue
        shutil.rmtree(entry.path, ignore_errors=True)
        removed.append(Path(entry.path))
    return removed
