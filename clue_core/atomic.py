"""Write files so that an interrupted run never leaves a half-written one behind.

Everything is written to a temporary name in the target's directory and renamed into
place only when complete; ``os.replace`` is atomic on the same file system.

The files get the permissions a plain ``open()`` would give (``0666`` less the umask:
``0644`` under the usual ``022``), not ``tempfile.mkstemp``'s private ``0600``: they are
results meant to be shared, and ``zipfile`` copies the mode into the submission zip.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any


@contextlib.contextmanager
def atomic_open(path: str | Path, mode: str = "w", encoding: str | None = "utf-8") -> Iterator[IO[Any]]:
    """Open a temporary sibling of ``path``; rename it over ``path`` only on success."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = _create_temporary(path)
    binary = "b" in mode
    try:
        with os.fdopen(fd, mode, encoding=None if binary else encoding) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        raise


def _create_temporary(path: Path) -> tuple[int, str]:
    """Create a new, empty sibling of ``path`` (as mkstemp does, but the umask applies to ``0o666``)."""
    flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0) | getattr(os, "O_CLOEXEC", 0)
    while True:
        name = str(path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp"))
        try:
            return os.open(name, flags, 0o666), name
        except FileExistsError:
            continue


def write_json(path: str | Path, data: Any, *, indent: int | None = 2) -> None:
    """Write one JSON document atomically, keeping Chinese characters readable."""
    with atomic_open(path) as handle:
        json.dump(data, handle, ensure_ascii=False, indent=indent)
        handle.write("\n")


def write_jsonl(path: str | Path, records: Iterable[Any]) -> None:
    """Write JSON Lines atomically, one compact object per line."""
    with atomic_open(path) as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False))
            handle.write("\n")
