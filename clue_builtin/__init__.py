"""clue-builtin: the plugin every clue-core install has (accuracy, macro_f1, the two submission
file shapes, the baseline model).

It ships in the root ``clue-core`` distribution, so ``clue-core list`` still names it ``builtin``
from ``clue-core``, but it lives outside the kernel's package and, like any third-party plugin,
imports only :mod:`clue_core.plugin`: the kernel knows nothing of any metric, writer or model, and
a feature of this plugin can change without touching the kernel. ``CLUE_DISABLE_PLUGINS=builtin``
turns it off as it does any other.
"""
