"""``clue-core corpus split``: one big text file into CLUECorpus2020's ≤ 4 MB file layout.

The input is read line by line (one sentence per line, a blank line between documents)
and written into ``PREFIX_00000.txt``, ``PREFIX_00001.txt``, … of at most ``max_bytes``
each. Documents are never cut between files, except one that alone is larger than the
limit: it is cut at sentence boundaries, and the command says how many were. Everything
is written into a new hidden staging folder (``mkdtemp``: never one that already exists)
renamed into place at the end, so an interrupted or failed split leaves no half-written
output; a full disk is one line. The numbers are wide enough for every file the source
can give (at least five digits), so the names sort in file order.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from clue_core.plugin import ClueError, disk_fault_message

#: CLUECorpus2020's files are at most 4 MB.
DEFAULT_MAX_BYTES = 4 * 1024 * 1024
#: A prefix is a plain file name: the reader skips hidden files, and a path would write elsewhere.
_PREFIX = re.compile(r"[^./\\\x00-\x1f][^/\\\x00-\x1f]*")


@dataclass
class SplitResult:
    files: int = 0
    documents: int = 0
    cut_documents: int = 0


def name_width(source_bytes: int, max_bytes: int) -> int:
    """Digits for the file numbers: two files in a row always hold more than ``max_bytes``
    (the second did not fit after the first), so there are at most ``2·size/max_bytes + 1``."""
    return max(5, len(str(2 * source_bytes // max_bytes + 1)))


def _documents(path: Path, line_limit: int) -> Iterator[list[bytes]]:
    """Documents as lists of encoded lines (each ending in a newline), checking UTF-8 line by line."""
    lines: list[bytes] = []
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, 1):
            try:
                text = raw.decode("utf-8").strip().lstrip("\ufeff")
            except UnicodeDecodeError as exc:
                raise ClueError(f"{path}:{number}: not UTF-8 (byte {exc.start} of the line)") from None
            if text:
                line = text.encode("utf-8") + b"\n"
                if len(line) > line_limit:
                    raise ClueError(f"{path}:{number}: a single line of {len(line)} bytes is longer than a file "
                                    f"may be (--max-bytes {line_limit + 1}); split the line or raise --max-bytes")
                lines.append(line)
            elif lines:
                yield lines
                lines = []
    if lines:
        yield lines


def _pieces(document: list[bytes], limit: int) -> list[list[bytes]]:
    """The document whole, or cut at sentence boundaries into pieces that fit ``limit`` bytes."""
    pieces: list[list[bytes]] = [[]]
    size = 0
    for line in document:
        if pieces[-1] and size + len(line) > limit:
            pieces.append([])
            size = 0
        pieces[-1].append(line)
        size += len(line)
    return pieces


def split_file(source: Path, target: Path, max_bytes: int = DEFAULT_MAX_BYTES, prefix: str | None = None,
               say: Callable[[str], None] = print) -> SplitResult:
    """Split ``source`` into ``target`` (a new or empty folder); see the module doc."""
    source, target = Path(source), Path(target)
    if source.is_dir():  # "no such file" for a folder that is there sent users looking for a typo
        raise ClueError(f"{source}: is a folder, not a file; corpus split takes one big text file "
                        f"(corpus stats reads a folder of them)")
    if not source.is_file():
        raise ClueError(f"{source}: no such file" if not source.exists() else f"{source}: not a regular file")
    if max_bytes < 1024:
        raise ClueError(f"--max-bytes must be at least 1024, got {max_bytes}")
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise ClueError(f"{target}: exists and is not an empty folder; pass a new folder")
    name = source.stem.lstrip(".") if prefix is None else prefix
    if not _PREFIX.fullmatch(name):
        raise ClueError(f"--prefix {name!r}: expected a plain file name (no folder, not starting with '.')"
                        if prefix is not None else f"{source}: give the files a name with --prefix")
    width = name_width(source.stat().st_size, max_bytes)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.splitting-", dir=target.parent))
        umask = os.umask(0)
        os.umask(umask)
        staging.chmod(0o777 & ~umask)  # mkdtemp's folder is 0700; the result is an ordinary folder
    except OSError as exc:
        raise ClueError(disk_fault_message("corpus split", exc)) from None
    try:
        result = _write(source, staging, name, width, max_bytes)
        if target.exists():
            target.rmdir()
        os.replace(staging, target)
    except OSError as exc:
        raise ClueError(disk_fault_message("corpus split", exc)) from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    if result.cut_documents:
        say(f"note: {result.cut_documents} document(s) larger than {max_bytes} bytes were cut at sentence "
            f"boundaries")
    return result


def _write(source: Path, staging: Path, name: str, width: int, max_bytes: int) -> SplitResult:
    result = SplitResult()
    handle: IO[bytes] | None = None
    size = 0
    try:
        for document in _documents(source, max_bytes - 1):
            result.documents += 1
            block = b"".join(document)
            pieces = [document] if len(block) + 1 <= max_bytes else _pieces(document, max_bytes - 1)
            result.cut_documents += len(pieces) > 1
            for piece in pieces:
                data = b"".join(piece)
                gap = b"\n" if size else b""
                if handle is None or size + len(gap) + len(data) > max_bytes:
                    if handle is not None:
                        handle.close()
                    handle = open(staging / f"{name}_{result.files:0{width}d}.txt", "xb")  # noqa: SIM115 (one of many, closed below)
                    result.files += 1
                    size, gap = 0, b""
                handle.write(gap + data)
                size += len(gap) + len(data)
    finally:
        if handle is not None:
            handle.close()
    if not result.documents:
        raise ClueError(f"{source}: no text to split")
    return result
