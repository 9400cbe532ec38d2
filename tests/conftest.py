"""Fixtures shared by every test area: an in-process CLI and isolated kernels."""

from __future__ import annotations

import signal
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from clue_builtin import hooks as builtin
from clue_core.cli import cli
from clue_core.kernel import Kernel
from clue_data import hooks as data_plugin
from clue_leaderboard import hooks as leaderboard_plugin

# A suite started in the background of a non-interactive shell (`nohup …&`, a CI step run as a job) inherits
# SIGINT ignored, and so would every process a test starts: Python does not install its KeyboardInterrupt
# handler where SIGINT is ignored, so the Ctrl-C tests would fail or wait. A handler here is reset to the
# default disposition in each child at exec, where Python installs its own.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

REPO_ROOT = Path(__file__).resolve().parents[1]
REAL_SAMPLES = REPO_ROOT.parent / "shared" / "reference" / "real-samples"


@pytest.fixture
def isolated_kernel() -> Kernel:
    """An empty kernel with the built-in plugin and the first-party plugins every run can need (the
    leaderboard's submit/evaluate, fetching official data): no entry points, nothing global."""
    kernel = Kernel(entrypoints=False, strict=False, disabled=())
    kernel.register(builtin, "builtin", distribution="clue-core")
    kernel.register(leaderboard_plugin, "clue-leaderboard", distribution="clue-leaderboard")
    kernel.register(data_plugin, "clue-data", distribution="clue-data")
    return kernel


@pytest.fixture
def run_cli(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Callable[..., Result]:
    """Invoke ``clue-core`` in-process; pass ``kernel=`` to run against an isolated kernel.

    The cache (``CLUE_HOME``) points into the test's tmp dir so nothing leaks between tests.
    """
    monkeypatch.setenv("CLUE_HOME", str(tmp_path / "clue-home"))
    monkeypatch.delenv("CLUE_STRICT_PLUGINS", raising=False)
    monkeypatch.delenv("CLUE_DISABLE_PLUGINS", raising=False)
    runner = CliRunner()

    def invoke(*args: str, kernel: Kernel | None = None, **kwargs) -> Result:
        obj = {"kernel": kernel} if kernel is not None else None
        return runner.invoke(cli, [str(a) for a in args], obj=obj, catch_exceptions=False, **kwargs)

    return invoke


@pytest.fixture(autouse=True)
def _no_secret_outlives_its_test():
    """The registry of secrets (:mod:`clue_core.redaction`) lives as long as the process: a key one
    test put in the environment must not turn a later test's output into ``***``."""
    yield
    from clue_core import redaction

    redaction.reset()


@pytest.fixture(autouse=True)
def _no_kind_outlives_its_test():
    """The process's kind table (:mod:`clue_core.kinds`) lives as long as the process, and every kernel a
    test makes declares its kinds there: a kind a test's temporary plugin module declared (``clue_tagging``,
    gone from ``sys.path`` after the test) would otherwise stay, and a later test resolving the table's
    example types would fail to import it. The table is put back as it was before the test."""
    from clue_core import kinds

    declared, by_type = dict(kinds._DECLARED), dict(kinds._BY_TYPE)
    standing, installed_read = set(kinds._STANDING), kinds._installed_read
    yield
    kinds._DECLARED.clear()
    kinds._DECLARED.update(declared)
    kinds._BY_TYPE.clear()
    kinds._BY_TYPE.update(by_type)
    kinds._STANDING.clear()
    kinds._STANDING.update(standing)
    kinds._installed_read = installed_read
