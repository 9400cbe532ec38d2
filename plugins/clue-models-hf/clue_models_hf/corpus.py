"""A pre-training corpus in CLUECorpus2020's layout, read as a stream.

The layout: a folder (sub-folders such as ``news2016zh_corpus/`` allowed, searched
recursively) of UTF-8 ``.txt`` files, one sentence per line, a blank line between
documents. Files are taken in sorted order of their path relative to the root, so the
same folder always gives the same documents in the same order; nothing holds more than
one document in memory.

Which documents are held out for evaluation is decided by a hash of (relative path,
document index): stable across runs, machines and resumes, and independent of which
other files the folder holds.

A file that is empty (no text at all) or not UTF-8 is *bad*: :func:`check_file` says
why in words, and the callers name it in one line and refuse or skip it; nothing is
dropped silently. Imports nothing heavy (used by ``clue-core corpus`` too).
"""

from __future__ import annotations

import codecs
import hashlib
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from clue_core.plugin import ClueError

SUFFIX = ".txt"
#: Bytes read at a time when a file is checked.
CHUNK = 1 << 20
BAD_FILES = ("refuse", "skip")
#: Characters of a document handed on at a time, and the longest line read in one piece.
PART_CHARS, LINE_CHARS = 1 << 18, 1 << 16


@dataclass(frozen=True, slots=True)
class BadFile:
    path: Path
    reason: str

    def line(self) -> str:
        return f"{self.path}: {self.reason}"


@dataclass
class CorpusStats:
    """What ``clue-core corpus stats`` prints; characters exclude line breaks."""

    files: int = 0
    documents: int = 0
    sentences: int = 0
    characters: int = 0
    bytes: int = 0
    held_out_documents: int = 0
    bad: list[BadFile] = field(default_factory=list)


def corpus_files(root: Path) -> list[Path]:
    """Every ``.txt`` entry under ``root``, sorted by relative path (hidden files and folders skipped).

    Linked folders are followed (a sub-corpus is often a link to another disk), each real
    folder once, so a link loop ends. Entries that are no regular file (a broken link, a
    pipe) are listed too: :func:`check_file` names them rather than dropping them silently.
    """
    root = Path(root)
    if not root.is_dir():
        raise ClueError(f"{root}: no such corpus folder" if not root.exists() else f"{root}: not a folder")
    found: list[Path] = []
    seen: set[tuple[int, int]] = set()
    for folder, subfolders, names in os.walk(root, followlinks=True):
        info = os.stat(folder)
        if (info.st_dev, info.st_ino) in seen:
            subfolders[:] = []
            continue
        seen.add((info.st_dev, info.st_ino))
        subfolders[:] = sorted(d for d in subfolders if not d.startswith("."))
        found.extend(Path(folder) / n for n in names if n.endswith(SUFFIX) and not n.startswith("."))
    files = sorted(found, key=lambda p: p.relative_to(root).as_posix())
    if not files:
        raise ClueError(f"{root}: no {SUFFIX} files (expected CLUECorpus2020's layout: one sentence per line, "
                        f"a blank line between documents)")
    return files


def check_file(path: Path) -> str | None:
    """Why ``path`` cannot be read as corpus text ("empty", "not UTF-8 …"), or None when it can.

    Reads the file in chunks through an incremental decoder: memory stays at one chunk
    whatever the file's size, and the first bad byte is located by line.
    """
    if not Path(path).is_file():  # opening a pipe would wait forever
        return "not a regular file (a broken link, a pipe or a device); remove it"
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    line, offset, text_seen = 1, 0, False
    try:
        with open(path, "rb") as handle:
            while chunk := handle.read(CHUNK):
                try:
                    text = decoder.decode(chunk)
                except UnicodeDecodeError as exc:
                    where = offset + exc.start
                    line += chunk[:exc.start].count(b"\n")
                    return f"not UTF-8 (byte {where}, line {line}); convert it (iconv -f GB18030 -t UTF-8) or remove it"
                text_seen = text_seen or bool(text.replace("\ufeff", "").strip())
                line += chunk.count(b"\n")
                offset += len(chunk)
            try:
                decoder.decode(b"", final=True)
            except UnicodeDecodeError:
                return f"not UTF-8 (the file ends inside a character, byte {offset}); it may be cut short"
    except OSError as exc:
        return f"unreadable ({exc.strerror or exc})"
    return None if text_seen else "empty (no text); remove it"


def check_files(files: Iterable[Path]) -> list[BadFile]:
    return [BadFile(p, reason) for p in files if (reason := check_file(p)) is not None]


def usable_files(root: Path, files: Sequence[Path], bad: Sequence[BadFile], policy: str,
                 say: Callable[[str], None]) -> list[Path]:
    """The files to read under ``policy`` (refuse: any bad file is an error; skip: named, then left out)."""
    if policy not in BAD_FILES:
        raise ClueError(f"bad_files must be one of {', '.join(BAD_FILES)}, got {policy!r}")
    if not bad:
        return list(files)
    for item in bad:
        say(f"{'skipped' if policy == 'skip' else 'bad file'}: {item.line()}")
    if policy == "refuse":
        raise ClueError(f"{root}: {len(bad)} bad file(s) named above; fix or remove them, or pass "
                        f"--set bad_files=skip to leave them out")
    left = [p for p in files if p not in {b.path for b in bad}]
    if not left:
        raise ClueError(f"{root}: every file is bad; nothing to read")
    return left


def iter_parts(path: Path, part_chars: int = PART_CHARS, line_chars: int = LINE_CHARS
               ) -> Iterator[tuple[int, list[str], bool]]:
    """``(document index, sentences, ends the document)`` of one file, in parts of about ``part_chars``.

    Any run of blank (or whitespace-only) lines separates documents; a byte-order mark at
    the start is not text. Memory stays at one part whatever the file holds: a document
    larger than ``part_chars`` comes in several parts, and a line longer than ``line_chars``
    (a file without line breaks) is read, and counted, in pieces of that size.
    """
    index, part, size, in_document, line_has_text = 0, [], 0, False, False
    with open(path, encoding="utf-8-sig", errors="strict", newline=None) as handle:
        while piece := handle.readline(line_chars):
            text = piece.strip()
            if text:
                part.append(text)
                size += len(text)
                in_document = line_has_text = True
                if size >= part_chars:
                    yield index, part, False
                    part, size = [], 0
            if piece.endswith("\n"):
                if not line_has_text and in_document:
                    yield index, part, True
                    index, part, size, in_document = index + 1, [], 0, False
                line_has_text = False
    if in_document:
        yield index, part, True


def iter_documents(path: Path) -> Iterator[list[str]]:
    """The documents of one file, each a list of its sentences (see :func:`iter_parts`); holds
    one document in memory, so callers that may meet huge ones read parts instead."""
    document: list[str] = []
    for _index, sentences, end in iter_parts(path):
        document.extend(sentences)
        if end:
            yield document
            document = []


def held_out(relative: str, index: int, share: float) -> bool:
    """Whether document ``index`` of the file at ``relative`` (posix path under the root) is held out."""
    if share <= 0:
        return False
    digest = hashlib.blake2b(f"{relative}\0{index}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2 ** 64 < share


def relative_name(root: Path, path: Path) -> str:
    return Path(path).relative_to(root).as_posix()


def corpus_stats(root: Path, eval_share: float = 0.0) -> CorpusStats:
    """Files, documents, sentences and characters of a corpus folder, in one streaming pass."""
    root = Path(root)
    files = corpus_files(root)
    stats = CorpusStats()
    for path in files:
        reason = check_file(path)
        if reason is not None:
            stats.bad.append(BadFile(path, reason))
            continue
        stats.files += 1
        stats.bytes += path.stat().st_size
        relative = relative_name(root, path)
        for index, sentences, end in iter_parts(path):
            stats.sentences += len(sentences)
            stats.characters += sum(len(s) for s in sentences)
            if end:
                stats.documents += 1
                stats.held_out_documents += held_out(relative, index, eval_share)
    return stats
