"""Fetch an archive over HTTP: resumable, retried, verified, from the first URL that works.

Kept apart from the cache fill (:mod:`clue_data.cache`) because it is the only code that
talks to the network; its rules are:

* bytes stream into ``<dest>.part``, and an interrupted transfer resumes with a ``Range``
  request (or starts over when the server ignores it), so a dropped connection on a
  140 MB archive does not cost the whole download;
* transient failures (5xx, timeouts, dropped connections) are retried with backoff; 4xx
  are not, since retrying cannot fix them;
* the result is checked against the size and checksums the task plugin declares, and a
  mismatch deletes it: nothing unverified is ever renamed to its final name;
* ``$CLUE_DATA_URL`` replaces every URL (a user's mirror, or a test server).

Failures are :class:`DataError`. A failure to write the local file chains the ``OSError``
as ``__cause__``, so the caller that owns the folder (the data cache) can name it.
Stdlib only; ``urllib.request`` and click are imported only when used.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import time
import urllib.parse
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from clue_core.plugin import DataError, __version__, file_digests

if TYPE_CHECKING:
    from clue_core.plugin import DataSource

DATA_URL_ENV = "CLUE_DATA_URL"
"""A base URL that replaces the official host; the archive's filename is appended."""

CHUNK_SIZE = 1 << 16
TIMEOUT_SECONDS = 30.0
BACKOFF_SECONDS = 1.0
"""The wait before the first retry; it doubles after each failed attempt (tests set 0)."""

TRANSIENT_HTTP_STATUS = frozenset({408, 425, 429, 500, 502, 503, 504})
USER_AGENT = f"clue-core/{__version__} (+python-urllib)"


# --------------------------------------------------------------------------- checksums


def verification_problem(path: Path, *, size: int | None, sha256: str | None, md5: str | None) -> str | None:
    """Describe how ``path`` differs from what was promised, or ``None`` when it matches."""
    actual_size = Path(path).stat().st_size
    if size is not None and actual_size != size:
        return f"size mismatch: expected {size} bytes, got {actual_size}"
    wanted = {name: value.lower() for name, value in (("sha256", sha256), ("md5", md5)) if value}
    if not wanted:
        return None
    actual = file_digests(path, wanted)
    for name, expected in wanted.items():
        if actual[name] != expected:
            return f"{name} mismatch: expected {expected}, got {actual[name]}"
    return None


# --------------------------------------------------------------------------- one URL


class _TransientError(Exception):
    """A failure worth retrying (dropped connection, 5xx, timeout)."""


class _PermanentError(Exception):
    """A failure retrying the same URL cannot fix (403, 404, a malformed URL)."""


def download(
    url: str,
    dest: Path,
    *,
    size: int | None = None,
    sha256: str | None = None,
    md5: str | None = None,
    retries: int = 3,
    progress: bool = True,
) -> Path:
    """Fetch ``url`` to ``dest`` and verify it; return ``dest``.

    Bytes stream into ``<dest>.part``; an interrupted transfer (in this call or an earlier
    one) resumes with an HTTP ``Range`` request, or starts over when the server ignores it.
    Transient failures are retried ``retries`` times with exponential backoff; an attempt
    that gets further than any before it does not use up a retry. A verified ``dest`` that
    already exists is returned without a request. When size or checksum do not match,
    the file is deleted and a :class:`DataError` names the URL, expected and actual value.
    """
    dest = Path(dest)
    part = dest.with_suffix(dest.suffix + ".part")
    try:
        if dest.is_file():
            if verification_problem(dest, size=size, sha256=sha256, md5=md5) is None:
                return dest
            dest.unlink()  # a stale or damaged copy: fetch it again
        dest.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DataError(f"{dest}: cannot write the download ({exc.strerror or exc})") from exc

    failures = 0
    furthest = _size_or_zero(part)
    while True:
        try:
            _fetch_once(url, part, size=size, progress=progress)
            break
        except OSError as exc:  # network errors are translated inside; this is the local disk
            raise DataError(f"{part}: cannot write the download ({exc.strerror or exc})") from exc
        except _PermanentError as exc:
            raise DataError(f"download {url}: {exc}") from None
        except _TransientError as exc:
            reached = _size_or_zero(part)
            if reached > furthest:
                furthest = reached
                failures = 0
            failures += 1
            if failures > retries:
                kept = f" (the {reached} bytes received are kept to resume next time)" if reached else ""
                raise DataError(f"download {url} failed after {failures} attempts: {exc}{kept}") from None
            time.sleep(BACKOFF_SECONDS * 2 ** (failures - 1))

    problem = verification_problem(part, size=size, sha256=sha256, md5=md5)
    try:
        if problem is not None:
            part.unlink()
        else:
            os.replace(part, dest)
    except OSError as exc:
        raise DataError(f"{part}: cannot write the download ({exc.strerror or exc})") from exc
    if problem is not None:
        raise DataError(f"download {url}: {problem}; the file was deleted")
    return dest


def _size_or_zero(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def _fetch_once(url: str, part: Path, *, size: int | None, progress: bool) -> None:
    """One HTTP request that appends to (or restarts) ``part``; raises on any shortfall."""
    # Imported here: urllib.request costs more at import than all the rest of this module.
    import http.client
    import urllib.error
    import urllib.request

    offset = _size_or_zero(part)
    if size is not None and offset > size:
        part.unlink()  # longer than the real file: it cannot be a prefix of it
        offset = 0
    if size is not None and offset == size:
        return  # already complete; verification decides whether it is right
    headers = {"User-Agent": USER_AGENT, "Accept-Encoding": "identity"}
    if offset:
        headers["Range"] = f"bytes={offset}-"
    try:
        request = urllib.request.Request(url, headers=headers)
        response = urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS)
    except urllib.error.HTTPError as exc:
        exc.close()
        if exc.code == 416 and offset:
            part.unlink()  # the server will not continue our partial file: start over
            raise _TransientError("the server refused to resume (HTTP 416); restarting") from None
        if exc.code in TRANSIENT_HTTP_STATUS:
            raise _TransientError(f"HTTP {exc.code} {exc.reason}") from None
        raise _PermanentError(f"HTTP {exc.code} {exc.reason}") from None
    except ValueError as exc:  # malformed URL or unknown scheme
        raise _PermanentError(str(exc)) from None
    except urllib.error.URLError as exc:
        if isinstance(exc.reason, str) and exc.reason.startswith("unknown url type"):
            raise _PermanentError(exc.reason) from None
        if isinstance(exc.reason, OSError) and url.lower().startswith("file:"):
            # a local mirror ($CLUE_DATA_URL=file://…) missing the file is no flaky network: no retries
            raise _PermanentError(exc.reason.strerror or str(exc.reason)) from None
        raise _TransientError(f"cannot connect: {exc.reason}") from None
    except (OSError, http.client.HTTPException) as exc:
        raise _TransientError(f"cannot connect: {exc}") from None

    with response:
        mode = "ab"
        if offset and response.status != 206:
            offset, mode = 0, "wb"  # the server ignored Range and sends everything
        elif offset and not _content_range_starts_at(response.headers.get("Content-Range"), offset):
            part.unlink()
            raise _TransientError("the server resumed at the wrong position; restarting")
        length_header = response.headers.get("Content-Length")
        expected = int(length_header) if length_header and length_header.isdigit() else None
        total = offset + expected if expected is not None else size
        received = 0
        with part.open(mode) as out, _progress_bar(total, offset, part.name[: -len(".part")], progress) as advance:
            while True:
                try:
                    chunk = response.read(CHUNK_SIZE)
                except (OSError, http.client.HTTPException) as exc:
                    raise _TransientError(f"connection lost after {offset + received} bytes ({exc})") from None
                if not chunk:
                    break
                out.write(chunk)  # a full disk is not a network problem: it escapes as OSError
                received += len(chunk)
                advance(len(chunk))
        if expected is not None and received < expected:
            raise _TransientError(f"connection closed after {offset + received} of {offset + expected} bytes")


def _content_range_starts_at(header: str | None, offset: int) -> bool:
    match = re.match(r"\s*bytes\s+(\d+)-", header or "")
    return bool(match) and int(match.group(1)) == offset


@contextlib.contextmanager
def _progress_bar(total: int | None, done: int, label: str, enabled: bool) -> Iterator[Callable[[int], object]]:
    """Yield ``advance(n)``; draws click's bar on stderr when enabled and the size is known."""
    if not enabled or not total:
        yield lambda n: None
        return
    import click  # only when a bar is drawn

    with click.progressbar(length=total, label=label, file=sys.stderr, show_pos=False, show_percent=True) as bar:
        if done:
            bar.update(done)
        yield bar.update


# --------------------------------------------------------------------------- a task's archive


def source_urls(source: DataSource) -> list[str]:
    """The URLs to try for an archive, in order.

    ``$CLUE_DATA_URL`` replaces them all (a user's own mirror, or a test server), so that
    nothing is fetched from the official host when it is set.
    """
    base = os.environ.get(DATA_URL_ENV, "").strip()
    if base:
        return [base.rstrip("/") + "/" + urllib.parse.quote(source.filename)]
    return [source.url, *source.mirrors]


def download_source(source: DataSource, directory: Path, *, progress: bool = True) -> Path:
    """Download an archive into ``directory``, trying mirrors in turn; return its path.

    A local write failure stops at once (another mirror cannot fix a full disk) and keeps
    its ``OSError`` as ``__cause__``.
    """
    dest = Path(directory) / source.filename
    problems = []
    for url in source_urls(source):
        try:
            return download(url, dest, size=source.size, sha256=source.sha256, md5=source.md5, progress=progress)
        except DataError as exc:
            if isinstance(exc.__cause__, OSError):
                raise
            problems.append(str(exc))
    if len(problems) == 1:
        raise DataError(problems[0])
    raise DataError(f"could not download {source.filename} from any of {len(problems)} URLs: " + "; ".join(problems))
