"""Click parameter types shared by every command, the kernel's and the plugins' (``clue_core.plugin``).

``click.FLOAT`` and ``click.FloatRange`` take ``nan``, ``inf`` and ``-inf``: Python's ``float()``
parses them, and a NaN passes every range check because each comparison with it is false.
An option given one does not fail where it was given but far later, in a result file a strict
JSON reader refuses (``compare --tie-margin nan`` made every game a tie and wrote NaN into
comparison.json). :class:`FiniteFloat` refuses them while the command line is parsed, with
click's one ``Error: Invalid value for '--option'`` line and exit code 2.
"""

from __future__ import annotations

import math
from typing import Any

import click


class FiniteFloat(click.FloatRange):
    """A finite float, optionally within bounds (``FiniteFloat(min=0)``, as ``click.FloatRange`` takes them)."""

    name = "float"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = click.FLOAT.convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number.", param, ctx)
        return super().convert(number, param, ctx)

    def __repr__(self) -> str:
        return f"FiniteFloat({self._describe_range()})"
