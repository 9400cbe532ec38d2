"""Which report files in ``-o DIR`` clue-core wrote, so a report never replaces a user's own files.

``report.json`` carries the mark: its ``schema`` (``clue-core/report``) and ``written``, the
SHA-256 of the ``index.html`` and ``report.md`` written with it. Before anything is built,
each of the three that exists must be clue-core's: ``report.json`` by its schema, the other
two by a digest it recorded; anything else (the user's own page, a hand-edited
``report.md``) stops the command unless ``--force``. Other files in the folder are never
touched.

The three files are written to temporaries first and renamed into place only once all are
complete, ``report.json`` first; it also records (``replaced``) the digests of the files it
replaces, so a process killed between the renames leaves files that are still recognised.
A ``report.json`` of an older clue-core (no ``written``) vouches for the page and the
Markdown next to it only while they still begin as clue-core wrote them.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from pathlib import Path
from typing import Any

from clue_core.atomic import atomic_open
from clue_core.errors import ClueError

SCHEMA = "clue-core/report"
REPORT_JSON = "report.json"
PAGES = ("index.html", "report.md")
FILES = ("index.html", REPORT_JSON, "report.md")
#: How older clue-core versions began the two files (before report.json recorded their digests).
LEGACY_START = {"index.html": b"<!DOCTYPE html><html lang='zh-CN'><head><meta charset='utf-8'>",
                "report.md": b"# CLUE report\n"}


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _our_record(path: Path) -> dict[str, Any] | None:
    """``report.json``'s content when clue-core wrote it (its schema), else None."""
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("schema") == SCHEMA else None


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
    foreign = [folder / REPORT_JSON] if (folder / REPORT_JSON).exists() and record is None else []
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
    encoded = {name: text.encode("utf-8") for name, text in pages.items()}
    report["written"] = {name: digest(data) for name, data in encoded.items()}
    report["replaced"] = replaced
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
        raise ClueError(f"cannot write the report into {folder}: {exc.strerror or exc}") from None
