"""Writing under the data cache: one process per archive at a time, and failures named as the cache's.

Several processes may ask for the same archive at once (the ranks of ``accelerate launch``, two
runs given the same ``--data-dir`` zip): :func:`filling_cache` lets one of them download or unpack
it while the others wait, then find it done. A failure to write there (a full disk, a read-only
``$CLUE_HOME``) is not a bad archive, so it is worded as the cache's, naming the folder and how to
choose another: that is what the user can change. Moved here from the kernel with the cache itself
(issue 30): only this plugin writes under ``clue_home()``.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from clue_core.plugin import DataError, clue_home


@contextlib.contextmanager
def filling_cache(name: str) -> Iterator[None]:
    """Hold the cache's lock on ``name`` (one archive) while unpacking or downloading it under
    ``clue_home()``; a failure to write there is one :class:`DataError` naming the cache."""
    with _writing_cache(), exclusive(name):
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
def exclusive(name: str, home: Path | None = None) -> Iterator[None]:
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
