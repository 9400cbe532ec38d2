"""The run directory: its layout, its lock, and staging with an atomic swap (what the files hold,
and their one reader and writer, are :mod:`clue_core.record` and :mod:`clue_core.record_write`).

``<output-dir>/<task>/`` holds one finished run::

    manifest.json   versions, command, settings with their sources, data checksums, status
    metrics.json    dev scores, counts, leaderboard membership
    predictions/    per-example JSON Lines (dev.jsonl, test-<version>.jsonl)
    submission/     the leaderboard files
    model/          the trained model (``--model <this>/model --no-train`` reuses it)

A run is built in ``<output-dir>/.<task>.staging/`` and renamed into place only once it is
complete, so an earlier run is never lost to a run that fails; an interrupted staging
folder is what ``--resume`` continues. ``<output-dir>/.<task>.lock`` is held for the
whole run: a second run into the same directory stops with one line naming the holder,
and a lock left by a killed process is recognised as stale and taken over.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clue_core.atomic import disk_advice
from clue_core.errors import ClueError
from clue_core.record import MANIFEST, METRICS, PREDICTIONS_DIR, read_manifest  # the content is record.py's
from clue_core.record_check import NewerRecord

MODEL_DIR = "model"
SUBMISSION_DIR = "submission"
TRAINING_DIR = "training"

__all__ = ["MANIFEST", "METRICS", "MODEL_DIR", "PREDICTIONS_DIR", "SUBMISSION_DIR", "TRAINING_DIR", "RunLock",
           "RunPaths", "first_missing", "hold", "is_complete", "remove_path"]


def is_complete(run_dir: Path) -> bool:
    """Whether ``run_dir`` holds a finished run: a readable manifest (see :mod:`clue_core.record`)
    that says ``complete``; a damaged one is no complete run, to be replaced only on ``--overwrite``.

    A newer clue-core's run is neither: its refusal goes through, so the user upgrades instead of
    being told ``--overwrite`` would replace it.
    """
    try:
        manifest = read_manifest(run_dir, required=False)
    except NewerRecord:
        raise
    except ClueError:
        return False
    return manifest is not None and manifest.complete


@dataclass(frozen=True)
class RunPaths:
    """Where one task's run lives, is built, and is locked."""

    final: Path

    @property
    def staging(self) -> Path:
        return self.final.parent / f".{self.final.name}.staging"

    @property
    def lock(self) -> Path:
        return self.final.parent / f".{self.final.name}.lock"

    def _replaced(self) -> Path:
        return self.final.parent / f".{self.final.name}.replaced"

    def recover(self) -> None:
        """Finish or undo a swap that a kill interrupted between its two renames."""
        replaced = self._replaced()
        if not os.path.lexists(replaced):
            return
        if not os.path.lexists(self.final):
            if is_complete(self.staging):
                os.rename(self.staging, self.final)
            else:
                os.rename(replaced, self.final)
                return
        remove_path(replaced, ignore_errors=True)

    def interrupted(self) -> bool:
        """Whether staging holds an interrupted run; an empty folder (a kill right after it was made,
        before its manifest) holds nothing to resume or to lose."""
        staging = self.staging
        if staging.is_symlink() or not staging.is_dir():
            return os.path.lexists(staging)
        try:
            return any(staging.iterdir())
        except OSError:
            return True

    def publish(self) -> None:
        """Put the complete staging folder in place of the final one, replacing an older run.

        A rename can fail too (a full disk may not let a directory grow): the older run is
        then put back at once, not left under its temporary name. A final folder that is a
        symbolic link is replaced as a link: the folder it points to is left as it is.
        """
        replaced = self._replaced()
        if os.path.lexists(self.final):
            if os.path.lexists(replaced):
                remove_path(replaced)
            os.rename(self.final, replaced)
            try:
                os.rename(self.staging, self.final)
            except OSError:
                os.rename(replaced, self.final)
                raise
            remove_path(replaced, ignore_errors=True)
        else:
            os.rename(self.staging, self.final)


def remove_path(path: Path, ignore_errors: bool = False) -> None:
    """Remove a folder with its contents, or a file or symbolic link itself (``rmtree`` refuses
    links, and would leave a ``.replaced`` link that fails every later ``--overwrite``)."""
    try:
        if path.is_symlink() or not path.is_dir():
            path.unlink(missing_ok=True)
        else:
            shutil.rmtree(path)
    except OSError:
        if not ignore_errors:
            raise


def _process_start(pid: int) -> str | None:
    """The kernel's start time of ``pid`` (Linux), so a recycled pid is not taken for the holder."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            return handle.read().rpartition(")")[2].split()[19]
    except (OSError, IndexError):
        return None


def _alive(pid: int, start: str | None) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return start is None or _process_start(pid) in (None, start)


def _elsewhere(holder: dict[str, Any]) -> str:
    """For a lock held on another machine, which this one cannot check: the way out if it is gone."""
    if holder.get("host") == socket.gethostname():
        return ""
    return (f"; this machine cannot tell whether a process on {holder.get('host')} still runs: if it is gone, "
            f"delete the lock file")


class RunLock:
    """An exclusive lock file; crash-safe because a dead holder is detected, not trusted."""

    def __init__(self, path: Path, final: Path) -> None:
        self.path = path
        self.final = final
        self.held = False

    def acquire(self, command: list[str], echo: Any = None) -> None:
        """Take the lock or say who holds it; a failure (a full disk too) leaves no file behind."""
        pid = os.getpid()
        record = {"pid": pid, "start": _process_start(pid), "host": socket.gethostname(),
                  "since": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "command": command}
        # written whole to a private file, then linked into place: a lock that exists is never half-written
        # one private name per attempt: two threads of one process (two api.run calls) would otherwise
        # share it, and one's cleanup would remove the file the other is about to link
        private = self.path.with_name(f"{self.path.name}.{pid}.{uuid.uuid4().hex[:12]}")
        try:  # a full disk may fail the write after creating the file: it goes too
            private.write_text(json.dumps(record), encoding="utf-8")
            for _ in range(3):
                try:
                    os.link(private, self.path)
                except FileExistsError:
                    if self.path.is_dir() and not self.path.is_symlink():  # no process's lock: not to be removed
                        raise ClueError(f"{self.path} is a folder, not {self.final}'s lock file: move it away "
                                        f"and run again") from None
                    holder = self._holder()
                    if holder is not None and self._holder_alive(holder):
                        raise ClueError(
                            f"{self.final} is in use by process {holder.get('pid')} on {holder.get('host')} "
                            f"since {holder.get('since')} (lock {self.path}); wait for it or stop it"
                            f"{_elsewhere(holder)}") from None
                    if echo:
                        who = f"process {holder.get('pid')}" if holder else "an unreadable holder"
                        echo(f"removed a stale lock on {self.final} left by {who}, which is no longer running")
                    self.path.unlink(missing_ok=True)
                    continue
                self.held = True
                return
        finally:
            private.unlink(missing_ok=True)
        raise ClueError(f"could not take the lock {self.path}")

    def _holder(self) -> dict[str, Any] | None:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            return data if isinstance(data, dict) else None
        except (OSError, ValueError):
            return None

    @staticmethod
    def _holder_alive(holder: dict[str, Any]) -> bool:
        if holder.get("host") != socket.gethostname():
            return True  # another machine's process: we cannot tell, so we respect it
        try:
            return _alive(int(holder["pid"]), holder.get("start"))
        except (KeyError, TypeError, ValueError):
            return False

    def release(self) -> None:
        if self.held:
            self.held = False
            self.path.unlink(missing_ok=True)


def first_missing(output_dir: Path) -> Path | None:
    """The topmost of ``output_dir`` and its parents that does not exist yet: what :func:`hold` will make,
    asked before it makes it, so that a failed run removes again the empty folders it made (up to this one)."""
    missing = None
    for folder in (output_dir, *output_dir.parents):
        if os.path.lexists(folder):
            break
        missing = folder
    return missing


def hold(output_dir: Path, runs: Sequence[RunPaths], command: list[str], echo: Any, locks: list[RunLock]) -> None:
    """The output folder made and each run folder's lock taken, appended to ``locks`` as it is taken (the
    caller releases them, also after a failure here); ``command`` is what each lock file names.

    Locks are taken in the order of their paths, not the run's: ``run a b`` and ``run b a``
    started together each took its first task's lock and were then both refused the other's."""
    try:
        output_dir.mkdir(parents=True, exist_ok=True)
        for paths in sorted(runs, key=lambda each: str(each.lock)):
            lock = RunLock(paths.lock, paths.final)
            lock.acquire(command, echo)
            locks.append(lock)
    except OSError as exc:
        raise ClueError(disk_advice(f"cannot write to output directory {output_dir}: {exc.strerror or exc}",
                                    exc)) from None
