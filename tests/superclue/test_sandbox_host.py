"""The sandbox in clue-core's own process: the auto fallback says so, no fence means no run, no readable
environ while the pool lives, and a kill -9 leaves no work root for good.

Nothing here waits on a clock: each test waits for the event it needs (a folder, a process gone)
with a deadline generous enough for a loaded machine, and kills what it started when it fails.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from clue_core.plugin import ClueError
from clue_tasks_superclue import sandbox, sandbox_host
from clue_tasks_superclue.sandbox import Check, Limits, Sandbox, Verdict

from .test_cpif_sandbox import GOOD

DEADLINE_S = 300.0


def wait_for(condition, what: str) -> None:
    """Poll ``condition`` until it holds; fail naming ``what`` after a deadline no loaded machine reaches."""
    deadline = time.monotonic() + DEADLINE_S
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"never happened: {what}")
        time.sleep(0.05)


def test_auto_without_bubblewrap_says_so_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox, "bwrap_path", lambda: None)
    monkeypatch.setattr(sandbox, "_warned", set())
    with pytest.warns(RuntimeWarning, match="bubblewrap \\(bwrap\\) is not installed"), \
            Sandbox(Limits(isolation="auto")) as box:
        assert box.run([Check(GOOD, ("ok", "ok"))]) == [Verdict(True, "good", False)]
        assert box.fences["isolation"] == "process"


NO_SECCOMP = """
import sys
sys.path.insert(0, {here!r})
import sandbox_seccomp
sandbox_seccomp.install = lambda libc=None: 'no seccomp filter for this test'
sys.argv = [{worker!r}, *sys.argv[1:]]
import sandbox_worker
sandbox_worker.main()
"""


def test_no_seccomp_no_checks(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A worker whose child cannot load the filter reports it in its probe; the pool refuses in one line."""
    wrapper = tmp_path / "sandbox_worker.py"
    wrapper.write_text(NO_SECCOMP.format(here=str(sandbox.WORKER.parent), worker=str(sandbox.WORKER)),
                       encoding="utf-8")
    monkeypatch.setattr(sandbox, "WORKER", wrapper)
    with pytest.raises(ClueError, match="no seccomp filter for this test") as caught, \
            Sandbox(Limits(isolation="process")) as box:
        box.run([Check(GOOD, ("ok", "ok"))])
    assert "\n" not in str(caught.value)


def test_clue_core_is_not_dumpable_while_the_pool_lives() -> None:
    before = sandbox_host.dumpable()
    with Sandbox(Limits(isolation="process")) as box:
        assert sandbox_host.dumpable() == 0
        with Sandbox(Limits(isolation="process")):
            pass
        assert sandbox_host.dumpable() == 0  # the inner pool's close does not restore it under the outer one
        assert box.run([Check(GOOD, ("ok", "ok"))]) == [Verdict(True, "good", False)]
    assert sandbox_host.dumpable() == before


KILLED = """
import sys
from clue_tasks_superclue.sandbox import Check, Limits, Sandbox
box = Sandbox(Limits(isolation="process", timeout=600, cpu=600, workers=1))
box.run([Check("def check_response(response):\\n    while True:\\n        pass\\n", ("x", "x"))])
"""


def test_a_kill_9_leaves_no_work_root_past_the_next_pool(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    child = subprocess.Popen([sys.executable, "-c", KILLED], env={**os.environ, "TMPDIR": str(tmp_path)})
    try:
        wait_for(lambda: any(tmp_path.glob("clue-cpif-*/check-*")), "a check running in its work dir")
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=DEADLINE_S)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    left = [p.name for p in tmp_path.glob("clue-cpif-*")]
    assert left and all(name.startswith(f"clue-cpif-{child.pid}-") for name in left)
    alive = tmp_path / f"clue-cpif-{os.getpid()}-another-run"
    alive.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with Sandbox(Limits(isolation="process")):
        pass
    assert [p.name for p in tmp_path.glob("clue-cpif-*")] == [alive.name]  # a live run's root stays
