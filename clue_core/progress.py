"""Progress of long work (scoring, generating, judging, sweeps): a bar on a terminal, a plain line in a log.

Long work must show life wherever it runs: on a terminal a tqdm bar (if installed); in a CI log or
a cluster job's file, where a bar's carriage returns are lost, a line at most every
``CLUE_PROGRESS_EVERY`` seconds (15): ``[task] scoring: 40/100 examples, 1.3/s, ~46 s left``;
work done before the first line prints none. ``CLUE_PROGRESS``: ``auto`` (default), ``bar``,
``lines`` or ``off``. Only the main process (``RANK`` 0) shows anything. Work that asks another
plugin's code (a judge asking a model) opens its progress with ``gathers=True``: a progress opened
inside it moves it instead of showing itself, so the judging bar counts the model's answers.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from typing import Any

#: The progress open in this process, innermost last.
_OPEN: list[Progress] = []


def _duration(seconds: float) -> str:
    whole = round(seconds)
    return (f"{whole} s" if whole < 60 else f"{whole // 60} min {whole % 60} s" if whole < 3600
            else f"{whole // 3600} h {whole % 3600 // 60} min")


def _settings() -> tuple[float, str]:
    """``CLUE_PROGRESS_EVERY`` and ``CLUE_PROGRESS``; a value neither takes is one line (exit 2), not a traceback."""
    every, mode = os.environ.get("CLUE_PROGRESS_EVERY") or "15", (os.environ.get("CLUE_PROGRESS") or "auto").lower()
    if not every.replace(".", "", 1).isdigit() or mode not in ("auto", "bar", "lines", "off"):
        from clue_core.errors import ClueError

        raise ClueError(f"CLUE_PROGRESS={mode!r} CLUE_PROGRESS_EVERY={every!r}: CLUE_PROGRESS is auto, bar, lines or "
                        f"off, CLUE_PROGRESS_EVERY the seconds between progress lines in a log (0 or more)")
    return float(every), mode


class Progress:
    """``with Progress(total, label, unit, done=cached) as progress: ... progress.update(n)``."""

    def __init__(self, total: int, label: str, unit: str = "examples", *, done: int = 0, shown: bool = True,
                 gathers: bool = False, clock: Callable[[], float] = time.monotonic) -> None:
        self.total, self.label, self.unit, self.done, self._clock = total, label, unit, done, clock
        self.gathers, self.parent = gathers, _OPEN[-1] if _OPEN and _OPEN[-1].gathers else None
        self._start = self._last = clock()
        self._first, self._printed, self._said, self._bar = done, done, False, None
        self.every, mode = _settings()
        if self.parent is not None:  # cached work is done, not part of the rate
            mode, self.parent._first = "into", self.parent._first + min(done, self.parent.total - self.parent.done)
            if done:
                self.parent.update(done)
        elif not shown or os.environ.get("RANK", "0") not in ("", "0"):
            mode = "off"
        elif mode == "auto":
            mode = "bar" if sys.stderr.isatty() else "lines"
        if mode == "bar":
            try:
                from tqdm import tqdm
            except ImportError:  # no tqdm: plain lines, on a terminal too
                mode = "lines"
            else:  # delay: work done within a second draws no bar
                self._bar = tqdm(total=total, initial=done, desc=label, unit=unit.rstrip("s") or unit, delay=1.0,
                                 dynamic_ncols=True, leave=False)
        self.mode = mode
        _OPEN.append(self)

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def update(self, n: int = 1) -> None:
        """``n`` more done (a gathering progress stops at its total); a line when the last is ``every`` s old."""
        n = max(0, min(n, self.total - self.done)) if self.gathers else n
        self.done += n
        if self.parent is not None:
            self.parent.update(n)
        elif self._bar is not None:
            self._bar.update(n)
        elif self.mode == "lines" and self._clock() - self._last >= self.every:
            self._line()

    def line(self) -> str:
        """What a plain line says now: done/total, the rate since the start and the time left at that rate."""
        elapsed, text = max(self._clock() - self._start, 1e-9), f"{self.label}: {self.done}/{self.total} {self.unit}"
        rate = (self.done - self._first) / elapsed
        if self.done >= self.total:
            return f"{text} in {_duration(elapsed)}"
        return f"{text}, {rate:.3g}/s, ~{_duration((self.total - self.done) / rate)} left" if rate > 0 else text

    def _line(self) -> None:
        print(self.line(), file=sys.stderr, flush=True)
        self._last, self._printed, self._said = self._clock(), self.done, True

    def close(self) -> None:
        """The bar removed; in lines mode a last line, if an earlier one was printed and is out of date."""
        if self in _OPEN:
            _OPEN.remove(self)
        if self._bar is not None:
            self._bar, bar = None, self._bar
            bar.close()
        elif self.mode == "lines" and self._said and self._printed != self.done:
            self._line()
