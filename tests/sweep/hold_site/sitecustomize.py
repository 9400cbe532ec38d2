"""On ``PYTHONPATH`` in the Ray Ctrl-C test: every Python process started with ``$SWEEP_HOLD`` set
(Ray's workers too, which import no test module) holds its baseline trials as held_sweep.py does."""

import os
import sys

if os.environ.get("SWEEP_HOLD"):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    import held_sweep  # noqa: F401  (patches the baseline at import)
