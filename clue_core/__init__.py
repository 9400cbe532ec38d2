"""clue-core: a plugin-based toolkit for the CLUE benchmark.

The package itself stays tiny and cheap to import: every task, model, metric and
submission writer arrives through a plugin (see :mod:`clue_core.hookspecs`).
"""

__version__ = "0.1.0"
