"""An isolated kernel with the DataCLUE plugin and the tests' deterministic classifier."""

from __future__ import annotations

from pathlib import Path

import pytest

from clue_core.kernel import Kernel
from clue_tasks_dataclue import hooks as dataclue_plugin
from tests.dataclue.char_model import CharModelPlugin

DATA = Path(__file__).parent / "data"


@pytest.fixture
def kernel(isolated_kernel: Kernel) -> Kernel:
    isolated_kernel.register(dataclue_plugin, "clue-tasks-dataclue", distribution="clue-tasks-dataclue")
    isolated_kernel.register(CharModelPlugin(), "dc-char")
    assert all(p.status == "ok" for p in isolated_kernel.plugins), [p.error for p in isolated_kernel.plugins]
    return isolated_kernel
