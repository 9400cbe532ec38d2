"""The local executor: trials in worker processes on this machine (``--workers N``), or in this one (``0``).

Workers are started with the ``spawn`` method (a fresh interpreter: no fork of a process that
holds threads, torch or locks) and take trials from one queue, so a slow trial never holds up the
others. Each reports when it starts a trial and what came of it; a worker that dies (killed for
memory, a crash in native code) fails only the trial it was running, and a new worker takes its
place for the rest.

Ctrl-C stops the sweep cleanly: every worker gets one SIGINT (a second one, from the terminal's
own Ctrl-C reaching the whole process group, is ignored), the trial it runs is kept unfinished by
the kernel for the next rerun to resume, its result is still recorded, and no worker starts
another trial. The sweep waits for every worker to exit, not only for those it knows to run a
trial (a worker's "started" message may still be on its way), and reads what they sent last.
Workers that do not stop within ``GRACE`` seconds are terminated, and killed if that is not
enough, so the sweep's own exit never waits on one. A worker is started with SIGINT blocked and
lets it in once its handler is set: an interrupt sent while it starts is acted on then, never
lost and never a traceback (:mod:`clue_sweep.interrupts`).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import queue
import signal
import threading
import time
from collections.abc import Callable
from typing import Any

from clue_sweep import interrupts
from clue_sweep.worker import run_trial

#: Seconds workers get to stop after Ctrl-C (the kernel writes nothing more than the manifest then).
GRACE = 60.0
#: Seconds a terminated worker gets to exit before it is killed.
TERMINATE_GRACE = 5.0

Done = Callable[[dict[str, Any]], None]
Started = Callable[[str], None]

_stopping = False


def _on_sigint(signum: int, frame: Any) -> None:
    """The first SIGINT interrupts the trial; later ones (the terminal's and the sweep's) are ignored."""
    global _stopping
    if _stopping:
        return
    _stopping = True
    raise KeyboardInterrupt


def _watch_parent(parent: int, results: Any) -> None:
    """Stop this worker when the sweep that started it is gone (``kill -9``, a crash).

    Nobody would read its results or give it its stop sign, so it would otherwise run its trial
    to the end and then wait on the queue for ever, holding the trial's run lock against the
    rerun. It interrupts itself as Ctrl-C would (the kernel keeps the trial's staging folder for
    the rerun to resume), and exits outright if that takes longer than ``GRACE``.
    """
    while os.getppid() == parent:
        time.sleep(0.5)
    results.cancel_join_thread()  # nobody reads them now: exiting must not wait to flush them
    with contextlib.suppress(ProcessLookupError):
        os.kill(os.getpid(), signal.SIGINT)
    time.sleep(GRACE)
    os._exit(1)


def _serve(tasks: Any, results: Any, parent: int | None = None) -> None:
    """A worker's loop: take a trial, run it, report it, until the queue says stop or Ctrl-C does."""
    signal.signal(signal.SIGINT, _on_sigint)
    try:
        interrupts.unblock()  # started blocked: a SIGINT sent while this interpreter started arrives now
        if parent is not None:
            threading.Thread(target=_watch_parent, args=(parent, results), daemon=True,
                             name="clue-sweep-parent-watch").start()
        while not _stopping:
            payload = tasks.get()
            if payload is None:
                break
            results.put(("start", payload["id"], os.getpid()))
            results.put(("done", run_trial(payload), os.getpid()))
    except KeyboardInterrupt:  # idle, between two trials: nothing to keep
        pass


def run_inline(payloads: list[dict[str, Any]], done: Done, started: Started) -> None:
    """Every trial in this process, one after another (``--workers 0``: debugging, a profiler)."""
    for payload in payloads:
        started(payload["id"])
        result = run_trial({**payload, "cpus": None})  # this process's threads are its own
        done(result)
        if result["status"] == "interrupted":
            raise KeyboardInterrupt


class _Pool:
    """The worker processes of one sweep and what each is running."""

    def __init__(self, payloads: list[dict[str, Any]]) -> None:
        self.context = multiprocessing.get_context("spawn")
        self.tasks = self.context.Queue()
        self.results = self.context.Queue()
        self.tasks.cancel_join_thread()  # trials left in the queue after Ctrl-C must not block the exit
        for payload in payloads:
            self.tasks.put(payload)
        self.processes: list[Any] = []
        self.running: dict[int, str] = {}  # pid -> trial id

    def start_worker(self) -> None:
        """One more worker; a Ctrl-C meanwhile is raised once it is started and known (see the module)."""
        self.tasks.put(None)  # one stop sign per worker, taken when the queue runs dry
        process = self.context.Process(target=_serve, args=(self.tasks, self.results, os.getpid()), daemon=True,
                                       name="clue-sweep-worker")
        with interrupts.deferred():
            process.start()
            self.processes.append(process)

    def alive(self) -> bool:
        return any(p.is_alive() for p in self.processes)

    def dead(self) -> list[Any]:
        """Workers that ended without being asked to; each is forgotten once reported."""
        gone = [p for p in self.processes if not p.is_alive() and p.exitcode not in (0, None)]
        for process in gone:
            self.processes.remove(process)
        return gone

    def interrupt(self) -> None:
        for process in self.processes:
            if process.is_alive() and process.pid is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(process.pid, signal.SIGINT)

    def close(self) -> None:
        """Stop what is left: SIGTERM, then SIGKILL for a worker that outlives ``TERMINATE_GRACE``.

        ``multiprocessing`` joins its children at exit without a time limit, so a worker left
        alive here would hold the sweep's own exit for ever.
        """
        for stop in ("terminate", "kill"):
            left = [p for p in self.processes if p.is_alive()]
            for process in left:
                getattr(process, stop)()
            deadline = time.monotonic() + TERMINATE_GRACE
            for process in left:
                process.join(timeout=max(0.0, deadline - time.monotonic()))
        self.results.close()
        self.tasks.close()


def _died(process: Any) -> str:
    code = process.exitcode
    how = f"signal {-code}" + (" (killed: out of memory?)" if code == -signal.SIGKILL else "") if code < 0 else \
        f"exit code {code}"
    return f"its worker process died ({how})"


def run_local(payloads: list[dict[str, Any]], workers: int, done: Done, started: Started) -> None:
    """Run the trials on ``workers`` processes; ``done`` gets each result as it arrives (in this process).

    Ctrl-C (here, while the workers start, or a stop whose KeyboardInterrupt was lost: see
    :mod:`clue_sweep.interrupts`): the workers are interrupted, their results recorded as they
    exit, then :class:`KeyboardInterrupt` is raised.
    """
    if not payloads:
        return
    pool = _Pool(payloads)
    pending = {p["id"] for p in payloads}
    try:
        try:
            for _ in range(min(workers, len(payloads))):
                pool.start_worker()
            while pending:
                if interrupts.requested():
                    raise KeyboardInterrupt
                _receive(pool, pending, done, started, timeout=0.5)
        except KeyboardInterrupt:
            pool.interrupt()
            deadline = time.monotonic() + GRACE
            while pool.alive() and time.monotonic() < deadline:
                with contextlib.suppress(KeyboardInterrupt):  # a second Ctrl-C does not lose the results
                    _receive(pool, pending, done, started, timeout=0.5, restart=False)
            with contextlib.suppress(KeyboardInterrupt):  # what the last ones sent as they exited
                while pending and _receive(pool, pending, done, started, timeout=0.05, restart=False):
                    pass
            raise
    finally:
        pool.close()


def _receive(pool: _Pool, pending: set[str], done: Done, started: Started, *, timeout: float,
             restart: bool = True) -> bool:
    """Take one message from the workers (True); or, after ``timeout`` of silence, look for dead workers."""
    try:
        kind, value, pid = pool.results.get(timeout=timeout)
    except queue.Empty:
        for process in pool.dead():
            trial = pool.running.pop(process.pid, None)
            if trial is not None and trial in pending:
                pending.discard(trial)
                done({"id": trial, "status": "failed", "error": _died(process), "primary": None,
                      "primary_metric": None, "seconds": None})
            if restart and pending:
                pool.start_worker()
        return False
    if kind == "start":
        pool.running[pid] = value
        started(value)
        return True
    pool.running.pop(pid, None)
    pending.discard(value["id"])
    done(value)
    return True
