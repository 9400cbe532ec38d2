"""One sweep at a time in a folder: ``DIR/.sweep.lock``, an exclusive ``flock`` held while the sweep runs.

Two sweeps writing one ``summary.json`` would each overwrite the other's view of the trials, and
their workers would race for the same trial folders. The second sweep is refused in one line
naming the first one's process. The lock is the operating system's (``flock``), so a sweep killed
with ``kill -9`` leaves no stale lock: the kernel releases it with the process. The descriptor is
not inherited by worker processes (Python opens files non-inheritable), so orphaned workers never
hold it either.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

from clue_core.plugin import ClueError

LOCK = ".sweep.lock"


@contextlib.contextmanager
def sweep_lock(root: Path) -> Iterator[None]:
    """Hold ``root``'s sweep lock for the ``with`` block, or refuse in one line if another sweep holds it."""
    path = root / LOCK
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise ClueError(f"{path}: cannot create the sweep's lock file ({exc.strerror or exc})") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                raise ClueError(f"{path}: cannot lock the sweep's folder ({exc.strerror or exc})") from None
            holder = os.pread(fd, 64, 0).decode("ascii", "replace").strip() or "?"
            raise ClueError(f"{root} is in use by another clue-core sweep (pid {holder}); wait for it to end "
                            "or choose another -o folder") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
        yield
    finally:
        os.close(fd)  # releases the lock; the file stays (removing it would race a sweep that just opened it)
