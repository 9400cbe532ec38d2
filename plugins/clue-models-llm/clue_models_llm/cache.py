"""Per-example results, kept outside the run folder so a killed run resumes where it stopped.

One SQLite file per model identity under ``<cache>/llm/``: a table of ``key → JSON``,
where the key hashes the rendered prompt (with its choices), the example kind and every
setting that changes answers. SQLite's transactions make every entry whole or absent and
let several processes (a data-parallel run) write one file; entries are committed batch
by batch, so a run killed half-way has every finished batch.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from clue_core.plugin import ClueError
from clue_models_llm.prompts import sha256

#: Seconds a writer waits for another process's transaction.
BUSY_TIMEOUT = 120.0


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
                                                   (model_identity, time.strftime("%Y-%m-%dT%H:%M:%S"))))
        except (OSError, sqlite3.Error) as exc:
            raise ClueError(f"cannot use the result cache {self.path}: {exc}") from None
        self._connection = connection

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

    def get_many(self, keys: Iterable[str]) -> dict[str, Any]:
        keys = list(dict.fromkeys(keys))
        if self._connection is None:
            self.misses += len(keys)
            return {}
        found: dict[str, Any] = {}
        for start in range(0, len(keys), 500):
            chunk = keys[start:start + 500]
            marks = ",".join("?" * len(chunk))
            rows = self._retry(lambda chunk=chunk, marks=marks: self._connection.execute(  # type: ignore[union-attr]
                f"SELECT key, value FROM results WHERE key IN ({marks})", chunk).fetchall())
            for key, value in rows:
                found[key] = json.loads(value)
        self.hits += len(found)
        self.misses += len(keys) - len(found)
        return found

    def put_many(self, items: Mapping[str, Any]) -> None:
        """Store entries in one transaction: all of them or, if the process dies, none."""
        if self._connection is None or not items:
            return
        rows = [(key, json.dumps(value, ensure_ascii=False)) for key, value in items.items()]
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
            raise ClueError(f"cannot write the result cache {self.path}: {exc}") from None
        self.written += len(rows)

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    def stats(self) -> dict[str, Any]:
        return {"path": str(self.path) if self.path else None, "hits": self.hits, "misses": self.misses,
                "written": self.written}
