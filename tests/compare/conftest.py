"""The compare tests drive ``clue-core compare`` in-process; it needs no plugins, so no kernel is loaded."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result


@pytest.fixture
def compare(run_cli: Callable[..., Result], isolated_kernel, tmp_path: Path) -> Callable[..., Result]:
    """``compare(*args)``: run ``clue-core compare`` with an isolated kernel (plugins are not needed)."""

    def invoke(*args: object) -> Result:
        return run_cli("compare", *map(str, args), kernel=isolated_kernel)

    return invoke
