"""Which report files in ``-o DIR`` clue-core wrote, so a report never replaces a user's own files.

``report.json`` carries the mark: its ``schema`` (``clue-core/report``) and ``written``, the
SHA-256 of the ``index.html`` and ``report.md`` written with it, and of itself (computed with
that entry empty). Before anything is built, each of the three that exists must be
clue-core's and unchanged: ``report.json`` by its schema and own digest, the other two by a
digest it recorded; anything else (the user's own page, a hand-edited
``report.md``) stops the command unless ``--force``. Other files in the folder are never
touched.

The three files are written to temporaries first and renamed into place only once all are
complete, ``report.json`` first; it also records (``replaced``) the digests of the files it
replaces, so a process killed between the renames leaves files that are still recognised.
The folder is locked (``flock`` on the folder itself) from that check to the last rename,
so a second report into it at once is refused rather than interleaving its renames.
A ``report.json`` of an older clue-core (no ``written``) vouches for the page and the
Markdown next to it only while they still begin as clue-core wrote them.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from clue_core.plugin import ClueError, atomic_open, disk_fault_message, redact, redact_text

try:
    import fcntl
except ImportError:  # not on Windows: there the folder is not locked
    fcntl = None  # type: ignore[assignment]

SCHEMA = "clue-core/report"
REPORT_JSON = "report.json"
PAGES = ("index.html", "report.md")
FILES = ("index.html", REPORT_JSON, "report.md")
#: How older clue-core versions began the two files (before report.json recorded their digests).
LEGACY_START = {"index.html": b"<!DOCTYPE html><html lang='zh-CN'><head><meta charset='utf-8'>",
                "report.md": b"# CLUE report\n"}


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _self_digest(record: dict[str, Any]) -> str:
    """The digest ``report.json`` records of itself: of its text with that digest left empty."""
    blank = {**record, "written": {**record["written"], REPORT_JSON: ""}}
    return digest(report_json_text(blank).encode("utf-8"))


def _our_record(path: Path) -> dict[str, Any] | None:
    """``report.json``'s content when clue-core wrote it (its schema), else None."""
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("schema") == SCHEMA else None


def _unchanged(record: dict[str, Any]) -> bool:
    """Whether our ``report.json`` is as written: it carries its own digest (``written["report.json"]``),
    so a note the user added to it is not replaced unasked; an older one (no such digest) is trusted."""
    written = record.get("written")
    return not (isinstance(written, dict) and REPORT_JSON in written) or written[REPORT_JSON] == _self_digest(record)


def _vouched(record: dict[str, Any], name: str, content: bytes) -> bool:
    """Whether ``record`` (our report.json) says ``content`` is the ``name`` clue-core wrote."""
    written = record.get("written")
    if not isinstance(written, dict):  # an older clue-core's report.json
        return content.startswith(LEGACY_START[name])
    replaced = record.get("replaced") if isinstance(record.get("replaced"), dict) else {}
    return digest(content) in (written.get(name), replaced.get(name))


def check_replaceable(folder: Path, force: bool = False) -> dict[str, str]:
    """Refuse (unless ``force``) report files in ``folder`` that clue-core did not write.

    Returns the digests of the pages found that are clue-core's, for ``replaced``.
    """
    record = _our_record(folder / REPORT_JSON)
    mine = record is not None and _unchanged(record)
    foreign = [folder / REPORT_JSON] if (folder / REPORT_JSON).exists() and not mine else []
    ours: dict[str, str] = {}
    for name in PAGES:
        path = folder / name
        if not path.exists():
            continue
        try:
            content = path.read_bytes()
        except OSError:
            foreign.append(path)
            continue
        if record is not None and _vouched(record, name, content):
            ours[name] = digest(content)
        else:
            foreign.append(path)
    if foreign and not force:
        names = ", ".join(str(p) for p in sorted(foreign, key=lambda p: FILES.index(p.name)))
        raise ClueError(f"{names}: not written by clue-core report (or changed since); pass --force to replace "
                        f"{'it' if len(foreign) == 1 else 'them'}")
    return ours


def report_json_text(report: dict[str, Any]) -> str:
    return json.dumps(report, ensure_ascii=False, indent=2) + "\n"


def write_files(folder: Path, pages: dict[str, str], report: dict[str, Any], replaced: dict[str, str]) -> None:
    """Write the pages and ``report.json`` (marked with their digests); replace nothing unless all are written."""
    report.update(redact(report))  # the run's secrets out before the digests: the files are what they vouch for
    encoded = {name: redact_text(text).encode("utf-8") for name, text in pages.items()}
    report["written"] = {name: digest(data) for name, data in encoded.items()}
    report["replaced"] = replaced
    report["written"][REPORT_JSON] = _self_digest(report)
    encoded[REPORT_JSON] = report_json_text(report).encode("utf-8")
    try:
        with contextlib.ExitStack() as stack:
            # renamed in reverse order of opening when the stack closes: report.json first
            for name in (*PAGES, REPORT_JSON):
                handle = stack.enter_context(atomic_open(folder / name, "wb"))
                handle.write(encoded[name])
                handle.flush()
                os.fsync(handle.fileno())  # a full disk shows here, before anything is replaced
    except OSError as exc:
        raise ClueError(disk_fault_message("cannot write the report", exc)) from None


def _lock(fd: int, folder: Path) -> None:
    """An exclusive lock on the folder itself (no lock file to leave behind); refuse while another holds it."""
    if fcntl is None:
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise ClueError(f"{folder}: another clue-core report is writing there; wait for it to finish") from None


@contextlib.contextmanager
def claimed(folder: Path) -> Iterator[None]:
    """Hold ``folder`` for one report, from the check of its files to the last rename.

    Two reports into one folder at once would otherwise each rename their files in turn,
    leaving one's report.json beside the other's pages (refused next time as changed). A
    folder this call created is removed again when the report fails, so a refused or
    failed report leaves nothing behind.
    """
    created = not folder.exists()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError as exc:
        raise ClueError(disk_fault_message("cannot write the report", exc)) from None
    try:
        _lock(fd, folder)
        yield
    except BaseException:
        if created:
            with contextlib.suppress(OSError):
                folder.rmdir()  # only when still empty
        raise
    finally:
        os.close(fd)
