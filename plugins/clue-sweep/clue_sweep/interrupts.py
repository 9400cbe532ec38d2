"""Ctrl-C in the sweep's own process: a stop that cannot be lost, and moments it must not cut in two.

Python turns SIGINT into a :class:`KeyboardInterrupt` raised wherever the main thread happens to
be. Two places make that unreliable for a process that owns workers:

* an exception raised while a finalizer (``__del__``, a weakref callback, the garbage collector)
  runs is printed as "Exception ignored" and dropped, so the sweep would go on waiting for held
  trials while its workers run them to the end. :func:`sigint_stops` therefore also records the
  stop, and the executors' loops check :func:`requested` on each turn;
* a worker that ``multiprocessing`` is starting: an interrupt between the child's creation and
  its registration leaves a process the sweep no longer knows of, and a child that gets SIGINT
  while its interpreter starts dies with a traceback. :func:`deferred` holds the interrupt for
  the few milliseconds of ``Process.start()`` and blocks SIGINT in the thread that starts the
  child, so the child inherits it blocked; the worker unblocks it once its own handler is set
  (:func:`clue_sweep.local._serve`), and an interrupt sent meanwhile is delivered then.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from typing import Any

_stop = threading.Event()


def requested() -> bool:
    """Whether a SIGINT reached this process while :func:`sigint_stops` was in force."""
    return _stop.is_set()


def _stopping(signum: int, frame: Any) -> None:
    _stop.set()
    raise KeyboardInterrupt


@contextlib.contextmanager
def sigint_stops() -> Iterator[None]:
    """For the ``with`` block, SIGINT raises KeyboardInterrupt and is remembered (see the module)."""
    if threading.current_thread() is not threading.main_thread():  # only the main thread gets signals
        yield
        return
    _stop.clear()
    before = signal.signal(signal.SIGINT, _stopping)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


@contextlib.contextmanager
def deferred(*, reraise: bool = True) -> Iterator[None]:
    """Hold SIGINT for the ``with`` block: it is blocked (children started here inherit that) and
    a SIGINT that arrives anyway is kept, then raised as KeyboardInterrupt at the end (``reraise``)
    or only remembered, for a block that is itself the stopping (the interrupted summary)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    came: list[int] = []

    def keep(signum: int, frame: Any) -> None:
        _stop.set()
        came.append(signum)

    before = signal.signal(signal.SIGINT, keep)
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})  # one pending is delivered to `keep` here
        signal.signal(signal.SIGINT, before)
    if came and reraise:
        raise KeyboardInterrupt


def unblock() -> None:
    """Let SIGINT in again in a worker that was started blocked (after its handler is set)."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
