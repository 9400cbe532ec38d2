"""Per-example results, kept outside the run folder so a killed run resumes where it stopped.

One SQLite file per model identity under ``<cache>/llm/``: a table of ``key → JSON``,
where the key hashes the rendered prompt (with its choices), the example kind and every
setting that changes answers. SQLite's transactions make every entry whole or absent and
let several processes (a data-parallel run) write one file; entries are committed batch
by batch, so a run killed half-way has every finished batch.

An entry that is not JSON, or that the reader's ``valid`` check refuses (another
version's shape, a flipped bit inside a value), is a miss: it is computed again and
replaced. A file SQLite cannot read or write is one :class:`ClueError` naming it and the
ways out (``--cache DIR``, ``--set result_cache=false``, deleting a damaged file).

Every entry is stored with the run's secrets replaced (``clue_core.plugin.redact``): a cache
outlives the run and is shared, so a key an answer quoted never reaches it; a hit replays the
redacted answer, exactly what the run's predictions recorded.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from clue_core.plugin import ClueError, redact
from clue_models_llm.cache_reason import why_not_writable
from clue_models_llm.prompts import sha256

#: Seconds a writer waits for another process's transaction.
BUSY_TIMEOUT = 120.0
#: What every message about an unusable cache file offers.
WAYS_OUT = "point --cache at another folder, or pass --set result_cache=false"


def entry_key(identity: Mapping[str, Any], request: Mapping[str, Any]) -> str:
    """The key of one request: its content and the settings it was answered under."""
    return sha256(json.dumps([identity, request], ensure_ascii=False, sort_keys=True))


class ResultCache:
    """``get_many`` / ``put_many`` over one SQLite file; ``None`` directory: caches nothing."""

    def __init__(self, directory: Path | None, model_identity: str) -> None:
        self.path: Path | None = None
        self.hits = 0
        self.misses = 0
        self.written = 0
        self._connection: sqlite3.Connection | None = None
        if directory is None:
            return
        folder = Path(directory).expanduser() / "llm"
        self.path = folder / f"{sha256(model_identity)[:32]}.sqlite"
        try:
            folder.mkdir(parents=True, exist_ok=True)
            connection = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT, isolation_level=None)
            connection.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT * 1000)}")
            self._retry(lambda: connection.execute("PRAGMA journal_mode = WAL"))
            # commits survive a killed process without an fsync each (WAL); only a power cut or an
            # OS crash may lose the last ones, which are then simply asked again
            connection.execute("PRAGMA synchronous = NORMAL")
            self._retry(lambda: connection.execute(
                "CREATE TABLE IF NOT EXISTS results (key TEXT PRIMARY KEY, value TEXT NOT NULL)"))
            self._retry(lambda: connection.execute(
                "CREATE TABLE IF NOT EXISTS model (identity TEXT PRIMARY KEY, first_used TEXT)"))
            self._retry(lambda: connection.execute("INSERT OR IGNORE INTO model VALUES (?, ?)",
                                                   (redact(model_identity), time.strftime("%Y-%m-%dT%H:%M:%S"))))
        except (OSError, sqlite3.Error) as exc:
            raise self._fault("use", exc) from None
        self._connection = connection

    def _fault(self, doing: str, exc: BaseException) -> ClueError:
        """One line for a cache file SQLite refused: which file, what went wrong, and the ways out."""
        if isinstance(exc, sqlite3.DatabaseError) and not isinstance(exc, sqlite3.OperationalError):
            # "database disk image is malformed", "file is not a database": the answers in it are lost anyway
            return ClueError(f"the result cache {self.path} is damaged ({exc}): delete that file (its results are "
                             f"computed again), {WAYS_OUT}")
        reason = why_not_writable(self.path) if isinstance(exc, sqlite3.OperationalError) and self.path else None
        because = f" ({reason})" if reason else ""  # SQLite's words name no reason: the OS's do
        return ClueError(f"cannot {doing} the result cache {self.path}: {exc}{because}; {WAYS_OUT}")

    @staticmethod
    def _retry(action: Any, attempts: int = 20) -> Any:
        for attempt in range(attempts):
            try:
                return action()
            except sqlite3.OperationalError as exc:  # "database is locked" while another process sets up
                if "locked" not in str(exc) or attempt == attempts - 1:
                    raise
                time.sleep(0.1 * (attempt + 1))
        return None

    @property
    def enabled(self) -> bool:
        return self._connection is not None

    def get_many(self, keys: Iterable[str], valid: Callable[[str, Any], bool] | None = None) -> dict[str, Any]:
        """The cached entries of ``keys``; one that is not JSON or that ``valid`` refuses is a miss."""
        keys = list(dict.fromkeys(keys))
        if self._connection is None:
            self.misses += len(keys)
            return {}
        found: dict[str, Any] = {}
        for start in range(0, len(keys), 500):
            for key, value in self._select(keys[start:start + 500]):
                entry = _decoded(value)
                if entry is not None and (valid is None or valid(key, entry)):
                    found[key] = entry
        self.hits += len(found)
        self.misses += len(keys) - len(found)
        return found

    def put_many(self, items: Mapping[str, Any]) -> None:
        """Store entries in one transaction: all of them or, if the process dies, none."""
        if self._connection is None or not items:
            return
        # an answer quoting a key (a model echoing its prompt, a checker's reason) is stored without it
        rows = [(key, json.dumps(redact(value), ensure_ascii=False)) for key, value in items.items()]
        connection = self._connection

        def write() -> None:
            connection.execute("BEGIN IMMEDIATE")
            try:
                connection.executemany("INSERT OR REPLACE INTO results VALUES (?, ?)", rows)
            except BaseException:
                connection.execute("ROLLBACK")
                raise
            connection.execute("COMMIT")

        try:
            self._retry(write)
        except sqlite3.Error as exc:
            raise self._fault("write", exc) from None
        self.written += len(rows)

    def _select(self, chunk: list[str]) -> list[tuple[str, Any]]:
        """The stored rows of ``chunk``; a damaged page becomes one line, not a traceback."""
        connection = self._connection
        assert connection is not None
        marks = ",".join("?" * len(chunk))
        try:
            return self._retry(lambda: connection.execute(
                f"SELECT key, value FROM results WHERE key IN ({marks})", chunk).fetchall())
        except sqlite3.Error as exc:
            raise self._fault("read", exc) from None

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    def stats(self) -> dict[str, Any]:
        return {"path": str(self.path) if self.path else None, "hits": self.hits, "misses": self.misses,
                "written": self.written}


def _decoded(value: Any) -> Any:
    """A stored value as JSON; ``None`` (a miss) for one that is not text holding JSON."""
    if not isinstance(value, str):
        return None
    try:
        return json.loads(value)
    except ValueError:
        return None
