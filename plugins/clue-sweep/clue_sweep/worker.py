"""One trial, run where an executor puts it: a local worker process, a Ray worker, or this process.

The trial is an ordinary ``api.run`` with ``resume=True`` into its own output folder, so the
kernel does what a rerun needs: a complete run is left as it is (after checking that it was made
with the same settings), an interrupted one continues from its staging folder, a new one starts.
Its progress lines go to ``<trial>/trial.log``, not the screen (several trials run at once).

The result is a plain dict, so it crosses process boundaries (multiprocessing, Ray) unchanged.
Every failure of the trial becomes its ``status`` and a one-line ``error``; the traceback of an
unexpected one goes to its log. Ctrl-C becomes ``"interrupted"``: the kernel keeps the staging
folder, which the next run of the sweep resumes.
"""

from __future__ import annotations

import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any

LOG = "trial.log"


def set_threads(cpus: int) -> None:
    """Give the trial ``cpus`` threads, the same on every executor: thread counts change float sums,
    and a sweep must give the same results on a laptop and on a cluster."""
    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[name] = str(cpus)
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(cpus)


def one_line(exc: BaseException) -> str:
    """The error as one line: a ClueError's message, or the exception's type and first line."""
    from clue_core.plugin import ClueError

    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    if isinstance(exc, ClueError):
        return text or type(exc).__name__
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def run_trial(payload: dict[str, Any]) -> dict[str, Any]:
    """Run one trial; ``payload`` is ``{"id", "arguments" (api.run's), "cpus"}``. Returns its result."""
    from clue_core.plugin import api

    started = time.monotonic()
    output = Path(payload["arguments"]["output_dir"])
    result: dict[str, Any] = {"id": payload["id"], "status": "failed", "primary": None, "primary_metric": None,
                              "error": None, "seconds": None}
    if payload.get("cpus"):
        set_threads(int(payload["cpus"]))
    try:
        output.mkdir(parents=True, exist_ok=True)
        with open(output / LOG, "a", encoding="utf-8") as log:
            def echo(line: str) -> None:
                log.write(line + "\n")
                log.flush()

            log.write(f"--- trial {payload['id']} (pid {os.getpid()})\n")
            try:
                records = api.run(**payload["arguments"], echo=echo)
                metrics = records[0].metrics
                result.update(status="complete", primary=metrics.primary, primary_metric=metrics.primary_metric)
            except KeyboardInterrupt as exc:
                # the kernel's message says what it kept ("interrupted: afqmc is kept unfinished in …")
                result.update(status="interrupted", error=(str(exc).strip().splitlines() or ["interrupted"])[0])
            except Exception as exc:
                result["error"] = one_line(exc)
                if not isinstance(exc, _clue_error()):
                    log.write(traceback.format_exc())
            log.write(f"--- {result['status']}" + (f": {result['error']}" if result["error"] else "") + "\n")
    except OSError as exc:  # the log itself (a full disk, a folder that cannot be made)
        result["error"] = one_line(exc)
    result["seconds"] = round(time.monotonic() - started, 3)
    return result


def _clue_error() -> type[Exception]:
    from clue_core.plugin import ClueError

    return ClueError
