"""An isolated kernel with the KgCLUE plugin and the tests' tiny kbqa_triple model."""

from __future__ import annotations

import pytest

from clue_core.kernel import Kernel
from clue_tasks_kgclue import hooks as kgclue_plugin
from tests.kgclue.tiny_model import TinyModelPlugin


@pytest.fixture
def kernel(isolated_kernel: Kernel) -> Kernel:
    isolated_kernel.register(kgclue_plugin, "clue-tasks-kgclue", distribution="clue-tasks-kgclue")
    isolated_kernel.register(TinyModelPlugin(), "kg-tiny")
    assert all(p.status == "ok" for p in isolated_kernel.plugins), [p.error for p in isolated_kernel.plugins]
    return isolated_kernel
