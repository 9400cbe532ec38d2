"""Write files so that an interrupted run never leaves a half-written one behind.

Everything is written to a temporary name in the target's directory and renamed into
place only when complete; ``os.replace`` is atomic on the same file system.

The files get the permissions a plain ``open()`` would give (``0666`` less the umask:
``0644`` under the usual ``022``), not ``tempfile.mkstemp``'s private ``0600``: they are
results meant to be shared, and ``zipfile`` copies the mode into the submission zip.
Files that other libraries write through their own temporary names (safetensors does)
are given that mode afterwards with :func:`apply_umask`.

A failed write raises its ``OSError`` with the target's path as ``filename`` (a failing
``write`` or ``fsync`` names no file by itself), and :func:`disk_fault_message` turns a
full disk, a used-up quota, a read-only file system or an I/O error into one line that
names the path and says what to do about it.

No secret reaches a file written here (:mod:`clue_core.redaction`): ``write_json`` and
``write_jsonl`` redact each document's values, keeping it valid JSON, and the handle
``atomic_open`` yields redacts what is written through it (text across writes, bytes write
by write), whoever writes — a plugin's own files, a sweep's summary, a report's pages.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import secrets
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from clue_core import redaction


def atomic_open(path: str | Path, mode: str = "w",
                encoding: str | None = "utf-8") -> contextlib.AbstractContextManager[IO[Any]]:
    """Open a temporary sibling of ``path``; rename it over ``path`` only on success. What is written
    through the handle has every registered secret replaced (see the module docstring)."""
    return _atomic_open(path, mode, encoding, redact=True)


@contextlib.contextmanager
def _atomic_open(path: str | Path, mode: str, encoding: str | None, *, redact: bool) -> Iterator[IO[Any]]:
    path = Path(path)
    created = _make_parents(path.parent)
    try:
        fd, tmp_name = _create_temporary(path)
    except OSError as exc:  # named as the file meant, not a temporary name nobody will find
        _remove_empty(created)
        raise OSError(exc.errno, exc.strerror, str(path)) from None
    binary = "b" in mode
    try:
        with os.fdopen(fd, mode, encoding=None if binary else encoding) as handle:
            shown: Any = handle
            if redact and redaction.active():
                shown = _RedactingBinary(handle) if binary else redaction.RedactingStream(handle)
            yield shown
            shown.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, path)
    except BaseException as exc:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        _remove_empty(created)
        if isinstance(exc, OSError) and exc.filename is None and exc.errno is not None:
            raise OSError(exc.errno, exc.strerror, str(path)) from None
        raise


def _make_parents(folder: Path) -> list[Path]:
    """Create ``folder`` and its missing parents; the ones created, outermost first."""
    missing = [p for p in (folder, *folder.parents) if not p.exists()][::-1]
    folder.mkdir(parents=True, exist_ok=True)
    return missing


def _remove_empty(created: list[Path]) -> None:
    """Remove the folders a failed write created, innermost first, while they are still empty:
    a full disk must not leave ``-o new/folder/x.zip``'s folders behind."""
    for folder in reversed(created):
        try:
            folder.rmdir()
        except OSError:  # another file arrived meanwhile, or it is gone: keep the rest
            return


def _create_temporary(path: Path) -> tuple[int, str]:
    """Create a new, empty sibling of ``path`` (as mkstemp does, but the umask applies to ``0o666``)."""
    flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0) | getattr(os, "O_CLOEXEC", 0)
    while True:
        name = str(path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp"))
        try:
            return os.open(name, flags, 0o666), name
        except FileExistsError:
            continue


def file_mode() -> int:
    """The mode a plain ``open()`` gives a new file under the current umask (``0644`` under ``022``)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:  # Linux: read without changing it
            for line in status:
                if line.startswith("Umask:"):
                    return 0o666 & ~int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    current = os.umask(0o022)  # elsewhere the only way to read the umask is to set it
    os.umask(current)
    return 0o666 & ~current


def apply_umask(*paths: str | Path) -> None:
    """Give files another library wrote through ``mkstemp`` (``0600``) the umask's mode instead."""
    mode = file_mode()
    for path in paths:
        os.chmod(path, mode)


#: What to do about each kind of disk fault, by errno.
DISK_FAULTS = {
    errno.ENOSPC: "the disk is full: free some space there or write somewhere else",
    errno.EDQUOT: "the disk quota is used up: free some space or ask for a larger quota",
    errno.EROFS: "the file system is read-only: write somewhere else",
    errno.EIO: "the disk reported an I/O error: check the disk, then try again",
    errno.EFBIG: "the file is too large for this file system: write somewhere else",
}


def disk_fault_message(subject: str, exc: OSError) -> str:
    """One line for a failed write: ``<subject>: <path>: <reason> (<what to do>)``."""
    where = f": {exc.filename}" if exc.filename else ""
    return disk_advice(f"{subject}{where}: {exc.strerror or exc}", exc)


def disk_advice(line: str, exc: OSError) -> str:
    """``line`` with what to do about ``exc`` when it is a disk fault (a message that names its path already)."""
    return f"{line} ({DISK_FAULTS[exc.errno]})" if exc.errno in DISK_FAULTS else line


class _RedactingBinary:
    """A binary handle whose writes have every secret's UTF-8 bytes replaced, write by write: nothing
    is held back, so ``tell`` and ``seek`` (a zip's headers) stay the file's own."""

    def __init__(self, handle: IO[bytes]) -> None:
        self._handle = handle

    def write(self, data: bytes) -> int:
        self._handle.write(redaction.redact_bytes(bytes(data)))
        return len(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._handle, name)


def write_json(path: str | Path, data: Any, *, indent: int | None = 2) -> None:
    """Write one JSON document atomically, keeping Chinese characters readable; secrets redacted."""
    text = _strict_json(path, data, indent)
    if redaction.active():
        text = redaction.json_text(text, data, lambda clean: _strict_json(path, clean, indent))
    with _atomic_open(path, "w", "utf-8", redact=False) as handle:
        handle.write(text)
        handle.write("\n")


#: Lines searched for a secret at once by ``write_jsonl`` (one substring search per secret's form).
_BATCH = 512


def write_jsonl(path: str | Path, records: Iterable[Any]) -> None:
    """Write JSON Lines atomically, one compact object per line; secrets redacted line by line.

    This writes every prediction, so it stays cheap: nothing is searched in a run without secrets,
    and with some each batch of lines is searched whole, a line redacted only in a batch that holds one.
    """
    def dump(clean: Any) -> str:
        return _strict_json(path, clean, None)

    with _atomic_open(path, "w", "utf-8", redact=False) as handle:
        batch: list[tuple[str, Any]] = []
        for record in records:
            batch.append((dump(record), record))
            if len(batch) == _BATCH:
                handle.write(_jsonl_text(batch, dump))
                batch = []
        if batch:
            handle.write(_jsonl_text(batch, dump))


def _jsonl_text(batch: list[tuple[str, Any]], dump: Any) -> str:
    """The lines of ``batch`` (``(text, record)`` pairs), each ending in a newline, without a secret."""
    text = "\n".join(line for line, _ in batch) + "\n"
    if not redaction.active() or not redaction.holds(text):
        return text
    return "".join(redaction.json_text(line, record, dump) + "\n" for line, record in batch)


def _strict_json(path: str | Path, data: Any, indent: int | None) -> str:
    """``data`` as standard JSON: NaN and Infinity are Python's extensions, which strict readers
    (browsers, jq, other languages) refuse, so a value of that kind is one line naming the file,
    and the temporary is dropped like any failed write."""
    from clue_core.errors import ClueError

    try:
        return json.dumps(data, ensure_ascii=False, indent=indent, allow_nan=False)
    except ValueError:
        raise ClueError(f"{path}: holds a value that is not a finite number (NaN or infinity), which JSON "
                        f"cannot represent; nothing was written") from None
    except TypeError as exc:  # a plugin's value JSON has no form for (a set, an object): its bug, one line
        raise ClueError(f"{path}: holds a value JSON cannot represent ({exc}); nothing was written") from None
