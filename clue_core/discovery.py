"""Which installed plugins load, and in which order: one answer for the kernel and the kind table.

A plugin is an entry point of the ``clue_core`` group. The built-in plugin loads first, then the
others by name, so which of two plugins claiming one name keeps it never depends on the order they
were installed in; of two distributions declaring one plugin name, the first keeps it.
``CLUE_DISABLE_PLUGINS`` names plugins (or their distributions) to skip. The kernel loads plugins
in this order (:meth:`clue_core.kernel.Kernel.load_entrypoints`), and code holding an example but no
kernel reads their kinds in the same one (:mod:`clue_core.kinds`), so both agree on whose declaration
of a name stands. A leaf (it imports nothing of clue-core), so both may import it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

GROUP = "clue_core"
"""The entry-point group plugins register under, and the name of the hooks' pluggy project."""
BUILTIN_PLUGIN = "builtin"
"""The built-in plugin's entry-point name (``clue_builtin``, in clue-core's own distribution)."""


def env_names(variable: str) -> set[str]:
    """The comma-separated names environment variable ``variable`` holds (``CLUE_DISABLE_PLUGINS``)."""
    return {part.strip() for part in os.environ.get(variable, "").split(",") if part.strip()}


def plugin_points() -> Iterator[EntryPoint]:
    """Every installed plugin's entry point in load order: the built-in plugin, then by name, each name once."""
    from importlib.metadata import entry_points

    seen: set[str] = set()
    for point in sorted(entry_points(group=GROUP), key=lambda ep: (ep.name != BUILTIN_PLUGIN, ep.name)):
        if point.name not in seen:  # two distributions claiming one plugin name: the first wins
            seen.add(point.name)
            yield point
