"""Shared by the benchmark scripts: the best wall time of several repeats.

The best (not the mean) is kept because other processes on a shared machine only ever
slow a run down.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def best_of(function: Callable[[], Any], repeats: int, before_each: Callable[[], None] | None = None
            ) -> tuple[float, Any]:
    """Run ``function`` ``repeats`` times; return the shortest time and the last result.

    ``before_each`` runs untimed before every repeat (e.g. to empty caches).
    """
    best, result = float("inf"), None
    for _ in range(repeats):
        if before_each is not None:
            before_each()
        started = time.perf_counter()
        result = function()
        best = min(best, time.perf_counter() - started)
    return best, result
