"""This plugin's opener (``OpenerSpec``): a user's ``--data-dir x.zip`` unpacked, safely, once.

The kernel hands over a file the user named and gets a folder back; it shows files read from
that folder as ``<their zip>:<member>`` itself. Here the zip is unpacked (:mod:`clue_data.archive`:
no escapes, no bombs, no half-written folders) into ``clue_home()/extracted/<sha256>/``, keyed by
its content so that an unchanged zip is unpacked only once and a fixed one never meets the copy of
its broken predecessor; a copy that has since lost or cut short a file is unpacked again
(:func:`clue_data.archive.intact`). Processes that unpack the same zip at once take turns under the cache's
lock (:func:`clue_data.locks.filling_cache`); each one *holds* the folder it reads
(:func:`clue_data.archive.hold`), so that when a run refuses the data, the copy it drops as it
ends (:func:`refused`) is not pulled from under another run still reading it.
"""

from __future__ import annotations

import atexit
import contextlib
import zipfile
from pathlib import Path

from clue_core.plugin import DataError, clue_home, file_digests
from clue_data import archive
from clue_data.locks import exclusive, filling_cache

_REFUSED: set[str] = set()
"""Folders unpacked from a user's zip whose data was refused; dropped when the process ends."""


def is_zip(path: Path) -> bool:
    """A zip by its content, whatever its name says (``data.bin`` saved from a browser)."""
    return zipfile.is_zipfile(path)


def open_zip(zip_path: Path) -> Path:
    """Unpack a user's zip into the cache, keyed by its sha256 so it is unpacked only once."""
    try:
        digest = file_digests(zip_path, ["sha256"])["sha256"]
    except OSError as exc:
        raise DataError(f"{zip_path}: cannot read ({exc.strerror})") from None
    folder = clue_home() / "extracted" / digest
    # held while this process reads it, so a refusal elsewhere keeps it
    if archive.hold(folder) and archive.intact(zip_path, folder):
        return folder
    with filling_cache(f"extract-{digest}"):
        if not archive.hold(folder):  # else another process finished while we waited
            archive.safe_extract(zip_path, folder)
            archive.hold(folder)
        elif not archive.intact(zip_path, folder):
            _unpack_again(zip_path, folder)
    return folder


def _unpack_again(zip_path: Path, folder: Path) -> None:
    """The copy lost or cut short a file since it was unpacked (a cleanup in the cache): unpacked again,
    rather than the zip refused for a file it has or a cut file read as the user's data. Not under
    another run still reading the copy (this process's hold ends here, and is taken on the new copy)."""
    if not archive.drop_unless_held(folder):
        raise DataError(f"{zip_path}: its unpacked copy {folder} lacks files of the zip, and another run is reading "
                        "it: run again when that run has ended")
    archive.safe_extract(zip_path, folder)
    archive.hold(folder)


def refused(folder: Path) -> None:
    """Have ``folder`` (a zip's copy) dropped at exit: its data was refused, and a fixed zip has
    another sha256, so nothing would use it again. Not at once: a caller such as ``clue-core
    check`` goes on reading the other files to report their problems too."""
    if not _REFUSED:
        atexit.register(drop_refused)
    _REFUSED.add(str(folder))


def drop_refused() -> None:
    """Delete the refused copies (see :func:`refused`), except those another run still reads
    (:func:`clue_data.archive.drop_unless_held`); the refusal's message matters more than this."""
    while _REFUSED:
        root = Path(_REFUSED.pop())
        with contextlib.suppress(OSError), exclusive(f"extract-{root.name}", root.parent.parent):
            archive.drop_unless_held(root)
