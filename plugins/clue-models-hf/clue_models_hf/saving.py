"""Writing weights and checkpoints: a disk fault becomes an ``OSError`` naming the file.

safetensors reports a full disk as ``SafetensorError("... I/O error: No space left on
device (os error 28)")`` and ``torch.save`` as ``RuntimeError("[enforce fail at
inline_container.cc] ... unexpected pos ...")``; neither is an ``OSError``, so the kernel
would show a traceback and keep a staging folder it cannot resume. :func:`disk_errors`
turns them into ``OSError(errno, strerror, path)``, which the runner words as one line
(see :func:`clue_core.atomic.disk_fault_message`) and answers by removing the staging
folder. PyTorch's error carries no errno, so a probe write in the same folder asks the
disk itself whether it can take data; when it can, the error is left as it was.

safetensors writes through a ``mkstemp`` name, so its files come out ``0600``; they are
given the umask's mode afterwards (:func:`clue_core.atomic.apply_umask`), like any file
the kernel writes.

Imports nothing heavy: torch and safetensors are only named, never imported, here.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
from collections.abc import Iterator
from pathlib import Path

from clue_core.plugin import apply_umask

#: Bytes the probe writes: more than a nearly full disk has left after a failed write.
PROBE_BYTES = 1 << 20
_OS_ERROR = re.compile(r"\(os error (\d+)\)")
_TORCH_WRITER = ("inline_container", "PytorchStreamWriter", "file write failed")


def probe_write(directory: Path) -> OSError | None:
    """Write and sync :data:`PROBE_BYTES` in ``directory``: the disk's own answer, or None if it took them."""
    name = Path(directory) / f".disk-probe.{secrets.token_hex(4)}.tmp"
    try:
        with open(name, "xb") as handle:
            handle.write(bytes(PROBE_BYTES))
            handle.flush()
            os.fsync(handle.fileno())
    except OSError as exc:
        return exc
    finally:
        with contextlib.suppress(OSError):
            name.unlink()
    return None


def as_disk_fault(exc: BaseException, path: str | Path) -> OSError | None:
    """``exc`` as an ``OSError`` naming ``path`` when it means the disk cannot take the data, else None."""
    if isinstance(exc, OSError):
        return exc if exc.filename else OSError(exc.errno, exc.strerror, str(path))
    if type(exc).__name__ == "SafetensorError":
        found = _OS_ERROR.search(str(exc))
        if found:
            code = int(found.group(1))
            return OSError(code, os.strerror(code), str(path))
        return None
    if isinstance(exc, RuntimeError) and any(mark in str(exc) for mark in _TORCH_WRITER):
        folder = Path(path) if Path(path).is_dir() else Path(path).parent
        answer = probe_write(folder)
        if answer is not None:
            return OSError(answer.errno or errno.EIO, answer.strerror or str(answer), str(path))
    return None


@contextlib.contextmanager
def disk_errors(path: str | Path) -> Iterator[None]:
    """Raise a disk fault of the writes inside as ``OSError`` naming ``path`` (see the module doc)."""
    try:
        yield
    except Exception as exc:
        fault = as_disk_fault(exc, path)
        if fault is None or fault is exc:
            raise
        raise fault from None


def share_weights(directory: str | Path) -> None:
    """The umask's mode for the ``*.safetensors`` files safetensors wrote ``0600`` in ``directory``."""
    apply_umask(*Path(directory).glob("*.safetensors"))
