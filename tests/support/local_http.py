"""A small file server on 127.0.0.1 for tests that download, with ways to misbehave.

Tests point ``CLUE_DATA_URL`` (or a ``DataSource``'s URLs) at it instead of the real
archive host. It serves a folder or a ``{name: bytes}`` mapping, honours single
``Range: bytes=N-`` / ``bytes=N-M`` requests, and can simulate what real mirrors do:
drop the connection part-way, answer 403/404/503, or ignore ``Range``. It records
every request so a test can assert, for example, that a resume sent ``Range``.

Usage::

    with LocalServer({"afqmc_public.zip": data}, drop_after=100) as server:
        monkeypatch.setenv("CLUE_DATA_URL", server.url)
        ...
        assert server.requests[1].headers["Range"] == "bytes=100-"

It listens on loopback only, answers each connection within ``request_timeout``
seconds, and shuts itself down after ``lifetime`` seconds even if a test forgets to.

:func:`zip_bytes` builds the small archives such tests serve (and unpack).
"""

from __future__ import annotations

import http.server
import io
import re
import threading
import urllib.parse
import zipfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path


def zip_bytes(
    entries: Mapping[str, bytes], *, symlinks: Iterable[str] = (), compression: int = zipfile.ZIP_STORED
) -> bytes:
    """A zip archive in memory: ``{member name: content}``, plus symlink members if asked."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=compression) as archive:
        for name, content in entries.items():
            archive.writestr(zipfile.ZipInfo(name), content, compress_type=compression)
        for name in symlinks:
            info = zipfile.ZipInfo(name)
            info.external_attr = (0o120777 << 16) | 0x20
            archive.writestr(info, b"/etc/passwd")
    return buffer.getvalue()


@dataclass(frozen=True)
class RecordedRequest:
    """One request the server saw and the status it answered with."""

    method: str
    path: str
    headers: dict[str, str] = field(default_factory=dict)
    status: int = 0


class LocalServer:
    """Serve ``content`` over HTTP on a free loopback port in a background thread.

    ``content``: a folder, or a mapping of URL path (``"a.zip"``, ``"sub/b.zip"``) to bytes.
    ``drop_after``: the first ``drops`` file responses announce the full length but send
    only this many bytes, then close the connection (a flaky network).
    ``status``: one status for every request, or a mapping of path to status (e.g.
    ``{"afqmc_public.zip": 403}``) for the paths that should fail.
    ``flaky``: statuses to answer the first requests with, in order (``[503, 503]``), before
    serving normally.
    ``ignore_range``: answer ``Range`` requests with the whole file and status 200.
    """

    def __init__(
        self,
        content: Path | str | Mapping[str, bytes],
        *,
        drop_after: int | None = None,
        drops: int = 1,
        status: int | Mapping[str, int] | None = None,
        flaky: Iterable[int] = (),
        ignore_range: bool = False,
        lifetime: float = 60.0,
        request_timeout: float = 10.0,
    ) -> None:
        self._root = Path(content).resolve() if isinstance(content, (str, Path)) else None
        self._files = None if self._root is not None else {k.lstrip("/"): bytes(v) for k, v in content.items()}
        self.drop_after = drop_after
        self._drops_left = drops if drop_after is not None else 0
        self._status = status
        self._flaky = list(flaky)
        self.ignore_range = ignore_range
        self._lifetime = lifetime
        self._request_timeout = request_timeout
        self._lock = threading.Lock()
        self._requests: list[RecordedRequest] = []
        self._httpd: http.server.ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._timer: threading.Timer | None = None
        self._port: int | None = None

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> LocalServer:
        handler = type("_Handler", (_Handler,), {"owner": self, "timeout": self._request_timeout})
        self._httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self._port = self._httpd.server_address[1]
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="local-http", daemon=True
        )
        self._thread.start()
        self._timer = threading.Timer(self._lifetime, self.stop)
        self._timer.daemon = True
        self._timer.start()
        return self

    def stop(self) -> None:
        """Stop serving; safe to call more than once and from the lifetime timer."""
        with self._lock:
            httpd, self._httpd = self._httpd, None
            timer, self._timer = self._timer, None
        if timer is not None and timer is not threading.current_thread():
            timer.cancel()
        if httpd is not None:
            httpd.shutdown()
            httpd.server_close()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)

    def __enter__(self) -> LocalServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # ------------------------------------------------------------------ for tests

    @property
    def port(self) -> int:
        """The port it listens (or listened) on; URLs stay valid for messages after ``stop``."""
        if self._port is None:
            raise RuntimeError("the server was never started")
        return self._port

    @property
    def url(self) -> str:
        """The base URL, with a trailing slash (what ``CLUE_DATA_URL`` takes)."""
        return f"http://127.0.0.1:{self.port}/"

    def url_for(self, name: str) -> str:
        return self.url + urllib.parse.quote(name.lstrip("/"))

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    def requests_for(self, name: str) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path == name.lstrip("/")]

    # ------------------------------------------------------------------ used by the handler

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(request)

    def _next_flaky(self) -> int | None:
        with self._lock:
            return self._flaky.pop(0) if self._flaky else None

    def _take_drop(self) -> bool:
        with self._lock:
            if self._drops_left > 0:
                self._drops_left -= 1
                return True
            return False

    def _status_for(self, path: str) -> int | None:
        if isinstance(self._status, Mapping):
            return self._status.get(path)
        return self._status

    def _body(self, path: str) -> bytes | None:
        if self._files is not None:
            return self._files.get(path)
        assert self._root is not None
        target = (self._root / path).resolve()
        if not target.is_relative_to(self._root) or not target.is_file():
            return None
        return target.read_bytes()


class _Handler(http.server.BaseHTTPRequestHandler):
    owner: LocalServer
    server_version = "clue-core-test"

    def do_HEAD(self) -> None:
        self._serve(send_body=False)

    def do_GET(self) -> None:
        self._serve(send_body=True)

    def log_message(self, format: str, *args: object) -> None:  # keep test output clean
        pass

    def _serve(self, *, send_body: bool) -> None:
        owner = self.owner
        path = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path).lstrip("/")
        headers = dict(self.headers.items())

        def finish(status: int) -> None:
            owner._record(RecordedRequest(self.command, path, headers, status))

        failure = owner._next_flaky() or owner._status_for(path)
        body = owner._body(path) if failure is None else None
        if failure is None and body is None:
            failure = 404
        if failure is not None:
            finish(failure)
            self.send_error(failure)
            return
        assert body is not None

        start, end, status = 0, len(body), 200
        wanted = self.headers.get("Range")
        if wanted and not owner.ignore_range:
            match = re.fullmatch(r"bytes=(\d+)-(\d*)", wanted.strip())
            if match:
                start = int(match.group(1))
                end = min(int(match.group(2)) + 1, len(body)) if match.group(2) else len(body)
                if start >= len(body) or start >= end:
                    finish(416)
                    self.send_response(416)
                    self.send_header("Content-Range", f"bytes */{len(body)}")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                status = 206
        payload = body[start:end]
        finish(status)
        self.send_response(status)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(payload)))
        self.send_header("Accept-Ranges", "none" if owner.ignore_range else "bytes")
        if status == 206:
            self.send_header("Content-Range", f"bytes {start}-{end - 1}/{len(body)}")
        self.end_headers()
        if not send_body:
            return
        if owner.drop_after is not None and owner._take_drop():
            self.wfile.write(payload[: owner.drop_after])
            self.wfile.flush()
            self.close_connection = True
            return
        self.wfile.write(payload)
