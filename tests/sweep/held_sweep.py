"""``python held_sweep.py sweep …``: clue-core whose baseline trials wait while ``$SWEEP_HOLD`` exists.

The subprocess tests signal a real sweep (SIGINT, SIGKILL) while its trials are inside training.
The patch is made at import, outside ``__main__``: the local executor's ``spawn`` workers import
this file as their main module, so each worker's trials wait too. Each trial that reaches
training writes ``$SWEEP_HOLD.<pid>``, so the test knows which processes run trials and when.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from clue_core import baseline

_fit = baseline.BaselineLearner.fit


def held_fit(self, train, dev, context):
    hold = Path(os.environ["SWEEP_HOLD"])
    Path(f"{hold}.{os.getpid()}").write_text("training\n", encoding="utf-8")
    while hold.exists():
        time.sleep(0.1)
    return _fit(self, train, dev, context)


def hold() -> None:
    """Make this process's baseline trials wait (the ``sitecustomize`` of the Ray test calls it in Ray's workers)."""
    baseline.BaselineLearner.fit = held_fit


hold()

if __name__ == "__main__":
    from clue_core.cli import main

    main()
