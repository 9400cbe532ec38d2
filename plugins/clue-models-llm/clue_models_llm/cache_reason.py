"""Why the result cache cannot be written, in the operating system's words.

SQLite says only "unable to open database file" (or "attempt to write a readonly database")
for a cache folder on a read-only file system or one the user may not write: the error
named the ways out (``--cache``, ``result_cache=false``) but not the reason, so a user could
not tell a read-only mount from a full disk or a typo. This asks the OS the same question
SQLite did, with a probe file it removes at once, and returns its answer
(``[Errno 30] Read-only file system``, ``[Errno 13] Permission denied``).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path


def _said(exc: OSError) -> str:
    return f"[Errno {exc.errno}] {exc.strerror}" if exc.errno is not None and exc.strerror else str(exc)


def why_not_writable(path: Path) -> str | None:
    """The OS's reason that ``path`` (a cache file) or its folder cannot be written; None if both can."""
    folder = path.parent
    probe = folder / f".{path.name}.{os.getpid()}.probe"
    try:
        handle = os.open(probe, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    except FileExistsError:
        handle = None  # a probe of a process that died: the folder is writable
    except OSError as exc:
        return _said(exc)
    if handle is not None:
        os.close(handle)
        with contextlib.suppress(OSError):
            os.unlink(probe)
    for name in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):  # SQLite writes all three
        if name.exists():
            try:
                os.close(os.open(name, os.O_RDWR))
            except OSError as exc:
                return f"{_said(exc)}: {name.name}"
    return None
