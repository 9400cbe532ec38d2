"""``--set`` overrides as settings layers, one per source, a leaf module planning builds on.

It lives apart from :mod:`clue_core.config` (which builds planning's request) so that planning does
not import config: that was an import circle.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from clue_core.settings import Layer


def override_layers(overrides: Mapping[str, Any], sources: Mapping[str, str],
                    keep: Callable[[str], bool] | None = None) -> list[Layer]:
    """The overrides that ``keep`` takes, one settings layer per source (``--set`` unless ``sources``
    names another): a sweep's ``[settings]`` and ``[grid]`` values reach the kernel as overrides, and
    an error about one named ``(--set)``, an option the user never gave, instead of the sweep file's table."""
    from clue_core.settings import Layer

    by_source: dict[str, dict[str, Any]] = {}
    for key, value in overrides.items():
        if keep is None or keep(key):
            by_source.setdefault(sources.get(key, "--set"), {})[key] = value
    return [Layer(source, values, user=True) for source, values in by_source.items()]
