"""Real sweeps in subprocesses for the signal tests: started in a session of their own, waited on
by event (a file, the exit), and killed with everything they started when a test fails.

No test here measures time. Each wait is for an event — a marker file a held trial or a hold
point writes, the sweep's exit, the last process of its session gone — and its deadline only
turns a sweep that never gets there into a failure: it is generous enough for a machine at load 15
on 2 cores (where Python start-up alone takes seconds, and a local Ray cluster minutes).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import psutil

#: Seconds to wait for an event before calling it missing; no claim about how long anything takes.
LOADED = 900.0
HELD = Path(__file__).with_name("held_sweep.py")


def wait_for(what: str, ready: Callable[[], bool], sweep: Sweep | None = None, seconds: float = LOADED) -> None:
    """Poll ``ready`` until it holds; fail saying ``what`` never happened (or that the sweep exited first)."""
    deadline = time.monotonic() + seconds
    while not ready():
        if sweep is not None and sweep.process.poll() is not None:
            raise AssertionError(f"the sweep exited (code {sweep.process.returncode}) before {what}:\n{sweep.output()}")
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {seconds:.0f} s" + (f"\n{sweep.output()}" if sweep else ""))
        time.sleep(0.1)


def _live(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


class Sweep:
    """``python ARGS…`` in a new session (its pid is the session's id, so its workers, a Ray cluster
    and any orphan stay findable), output to a file (a pipe nobody reads could fill and block it)."""

    def __init__(self, args: Sequence[str], env: dict[str, str], log: Path) -> None:
        self.log = log
        with open(log, "w", encoding="utf-8") as out:
            self.process = subprocess.Popen([sys.executable, *map(str, args)], env=env, stdout=out,
                                            stderr=subprocess.STDOUT, start_new_session=True)

    @property
    def pid(self) -> int:
        return self.process.pid

    def output(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")

    def session(self) -> list[int]:
        """The live processes of the sweep's session other than the sweep: its workers, Ray's, orphans."""
        found = []
        for pid in psutil.pids():
            with contextlib.suppress(OSError):
                if pid != self.pid and os.getsid(pid) == self.pid and _live(pid):
                    found.append(pid)
        return found

    def interrupt(self) -> None:
        """SIGINT to the sweep's process alone, as ``kill -INT`` does (not to its process group)."""
        self.process.send_signal(signal.SIGINT)

    def wait_exit(self, seconds: float = LOADED) -> int:
        wait_for("the sweep exits", lambda: self.process.poll() is not None, seconds=seconds)
        return self.process.returncode

    def wait_session_gone(self, seconds: float = LOADED) -> None:
        """Every process the sweep started is gone (workers, a local Ray cluster, the resource tracker)."""
        left: list[int] = []

        def empty() -> bool:
            left[:] = self.session()
            return not left

        try:
            wait_for("every process the sweep started is gone", empty, seconds=seconds)
        except AssertionError:
            raise AssertionError(f"still running after the sweep: {_describe(left)}\n{self.output()}") from None

    def kill(self) -> None:
        """SIGKILL the sweep and everything in its session; reap the sweep."""
        for pid in [self.pid, *self.session()]:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=60)


def _describe(pids: list[int]) -> str:
    described = []
    for pid in pids:
        with contextlib.suppress(psutil.Error):
            described.append(f"{pid} {' '.join(psutil.Process(pid).cmdline())[:100]}")
    return "; ".join(described) or "-"


@contextlib.contextmanager
def sweep_process(args: Sequence[str], env: dict[str, str], log: Path) -> Iterator[Sweep]:
    """A :class:`Sweep` that is killed, with its whole session, when the ``with`` block ends (a failed
    check included): no test leaves a held sweep or its workers behind."""
    sweep = Sweep(args, env, log)
    try:
        yield sweep
    finally:
        sweep.kill()
