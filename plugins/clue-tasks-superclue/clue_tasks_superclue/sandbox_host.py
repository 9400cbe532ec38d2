"""What the sandbox does in clue-core's own process: work roots that outlive no run, and no readable environ.

A plain-process worker's work root is a folder under the system temp folder named after the
clue-core process that made it (``clue-cpif-<pid>-…``). Closing the pool removes it; a clue-core
killed with SIGKILL cannot, so every new pool first sweeps the roots whose owner process is gone.

While a pool lives, clue-core's process is not dumpable (``PR_SET_DUMPABLE`` 0): its
``/proc/<pid>/environ`` (API keys, tokens) and memory are then readable to no process of
another uid and to no process without ``CAP_SYS_PTRACE``, whatever a checker gets hold of. It
is restored when the last pool closes (py-spy and core dumps work again).
"""

from __future__ import annotations

import ctypes
import os
import re
import shutil
import tempfile
import threading
from pathlib import Path

PREFIX = "clue-cpif-"
_PR_SET_DUMPABLE, _PR_GET_DUMPABLE = 4, 3
_lock = threading.Lock()
_held = [0, 1]  # pools alive, the dumpable value to restore


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def sweep(folder: str | None = None) -> list[str]:
    """Remove the work roots whose clue-core process is gone (a kill -9 leaves them); the paths removed."""
    removed = []
    for entry in Path(folder or tempfile.gettempdir()).glob(f"{PREFIX}*"):
        found = re.fullmatch(rf"{PREFIX}(\d+)-.*", entry.name)
        if found and entry.is_dir() and not entry.is_symlink() and not _alive(int(found.group(1))):
            shutil.rmtree(entry, ignore_errors=True)
            removed.append(str(entry))
    return removed


def work_root() -> str:
    """A fresh private work root for one plain-process worker, named after this process."""
    return tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-")


def _prctl() -> object | None:
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):  # not Linux
        return None


def hide() -> None:
    """clue-core non-dumpable while a pool lives (counted: pools may nest or overlap)."""
    prctl = _prctl()
    with _lock:
        if _held[0] == 0 and prctl is not None:
            _held[1] = int(prctl(_PR_GET_DUMPABLE, 0, 0, 0, 0))  # type: ignore[operator]
            prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)  # type: ignore[operator]
        _held[0] += 1


def unhide() -> None:
    """The last pool closed: clue-core dumpable again, as it was."""
    prctl = _prctl()
    with _lock:
        _held[0] = max(0, _held[0] - 1)
        if _held[0] == 0 and prctl is not None and _held[1] > 0:
            prctl(_PR_SET_DUMPABLE, _held[1], 0, 0, 0)  # type: ignore[operator]


def dumpable() -> int:
    """This process's dumpable flag (for tests and the record): 1 normally, 0 while hidden."""
    prctl = _prctl()
    return int(prctl(_PR_GET_DUMPABLE, 0, 0, 0, 0)) if prctl is not None else 1  # type: ignore[operator]
