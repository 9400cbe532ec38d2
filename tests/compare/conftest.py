"""The compare tests drive ``clue-core compare`` in-process, against a kernel holding only the built-in
plugin and clue-tasks-superclue: ``compare`` is that plugin's command (``clue_commands``), not the kernel's."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from clue_builtin import hooks as builtin
from clue_core.kernel import Kernel


def superclue_kernel() -> Kernel:
    """The built-in plugin and clue-tasks-superclue, registered in-process (no entry points, nothing global)."""
    from clue_tasks_superclue import hooks

    kernel = Kernel(entrypoints=False, strict=False, disabled=())
    kernel.register(builtin, "builtin", distribution="clue-core")
    kernel.register(hooks, "clue-tasks-superclue", distribution="clue-tasks-superclue")
    return kernel


@pytest.fixture
def compare(run_cli: Callable[..., Result], tmp_path: Path) -> Callable[..., Result]:
    """``compare(*args)``: run ``clue-core compare`` as the superclue plugin registers it."""
    kernel = superclue_kernel()

    def invoke(*args: object) -> Result:
        return run_cli("compare", *map(str, args), kernel=kernel)

    return invoke
