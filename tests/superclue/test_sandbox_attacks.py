"""Hostile checkers the first sandbox tests did not try: each one failed before its fix.

A checker is a stranger's code; besides breaking out, it must not be able to reach the
worker's own state (the fence, the protocol pipe, the request stream), leave anything behind
for the next check (patched modules, open files, signal handlers), read the user's
environment, or flood clue-core with its reason. Every case runs in both isolations where
bubblewrap starts, and is followed by a good check that must still pass.
"""

from __future__ import annotations

import tempfile
import time
import uuid
from pathlib import Path

import pytest

from clue_tasks_superclue.sandbox import Check, Limits, Sandbox, Verdict

from .test_cpif_sandbox import GOOD, ISOLATIONS, checker, refused


@pytest.fixture(params=ISOLATIONS)
def isolation(request: pytest.FixtureRequest) -> str:
    return request.param


def run_pair(isolation: str, first: str, second: str = GOOD, **limits: float) -> tuple[Verdict, Verdict]:
    """``first`` then ``second`` on one worker (the second sees whatever the first left behind)."""
    with Sandbox(Limits(isolation=isolation, workers=1, timeout=limits.get("timeout", 10.0),
                        cpu=limits.get("cpu", 5.0))) as box:
        one, two = box.run([Check(first, ("ok", "ok")), Check(second, ("ok", "ok"))])
    return one, two


def test_the_users_environment_is_not_the_checkers(isolation: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLUE_TEST_API_KEY", "sk-secret")
    bad, good = run_pair(isolation, checker(
        "env = sys.modules['os'].environ\nreturn {'check_code': True, 'reason': repr(dict(env))}"))
    assert "sk-secret" not in bad.reason and "CLUE_TEST_API_KEY" not in bad.reason
    assert good == Verdict(True, "good", False)


WALK = """
try:
    1 / 0
except ZeroDivisionError as error:
    frame = error.__traceback__.tb_frame
while frame is not None:
    for value in list(frame.f_locals.values()):
        if hasattr(value, 'read_roots'):
            value.active = False
            value.read_roots.append('/')
            value.work_dir = '/'
    frame = frame.f_back
open(TARGET, 'w').write('escaped')
return {'check_code': True}
"""


@pytest.mark.parametrize("reach", ["error.__traceback__.tb_frame", "sys._getframe()", "(lambda: (yield))().gi_frame"])
def test_the_fence_cannot_be_reached_through_frames(isolation: str, reach: str) -> None:
    target = Path(tempfile.gettempdir()) / f"cpif-escape-{uuid.uuid4().hex}"
    body = WALK.replace("TARGET", repr(str(target))).replace("error.__traceback__.tb_frame", reach)
    bad, good = run_pair(isolation, checker(body))
    refused(bad)
    assert not target.exists()
    assert good == Verdict(True, "good", False)


@pytest.mark.parametrize("first", [
    "re.search = lambda *args, **kwargs: None\nreturn {'check_code': True}",
    "json.loads = None\nsys.modules['re'].compile = None\nreturn {'check_code': True}",
    "sys.setrecursionlimit(30)\nreturn {'check_code': True}",
    "signal = sys.modules['signal']\nsignal.signal(signal.SIGALRM, lambda *a: 1 / 0)\nsignal.alarm(1)\n"
    "return {'check_code': True}",
    "files = []\ntry:\n    while True:\n        files.append(open('/dev/null'))\nexcept OSError:\n    pass\n"
    "return {'check_code': True}",
])
def test_nothing_stays_behind_for_the_next_check(isolation: str, first: str) -> None:
    second = checker("sys.modules['time'].sleep(1.5)\nfound = re.search('o', response) and json.loads('[1]')\n"
                     "open('/dev/null').close()\ndef deep(n):\n    return n and deep(n - 1)\ndeep(100)\n"
                     "return {'check_code': bool(found), 'reason': 'clean'}")
    one, two = run_pair(isolation, checker(first), second)
    assert two == Verdict(True, "clean", False), (one, two)


def test_reading_the_request_stream_steals_nothing(isolation: str) -> None:
    bad, good = run_pair(isolation, checker("return {'check_code': True, 'reason': sys.stdin.readline()}"))
    assert good == Verdict(True, "good", False), (bad, good)
    assert '"code"' not in bad.reason


def test_ignoring_sigxcpu_does_not_lift_the_cpu_limit(isolation: str) -> None:
    bad, good = run_pair(isolation, checker(
        "signal = sys.modules['signal']\nsignal.signal(signal.SIGXCPU, signal.SIG_IGN)\nwhile True:\n    pass"),
        cpu=1.0, timeout=30.0)
    refused(bad)
    assert "timed out" not in bad.reason and "SIGKILL" in bad.reason, bad  # the CPU limit, not the 30 s wall clock
    assert good == Verdict(True, "good", False)


def test_a_huge_reason_is_cut(isolation: str) -> None:
    bad, good = run_pair(isolation, checker("return {'check_code': True, 'reason': 'x' * (100 * 2 ** 20)}"))
    assert len(bad.reason) <= 10_000
    assert good == Verdict(True, "good", False)


@pytest.mark.parametrize("definition, passed", [
    ("class check_response:\n    def __init__(self, response):\n        pass\n", None),
    ("check_response = lambda response: {'check_code': response == 'ok'}\n", True),
    ("check_response = 3\n", None),
    ("def check_response(response):\n    return {'check_code': True, 'reason': object()}\n", True),
    ("def check_response(response):\n    return {'check_code': open}\n", False),
])
def test_odd_checkers(isolation: str, definition: str, passed: bool | None) -> None:
    one, good = run_pair(isolation, definition)
    if passed is None:
        refused(one)
    else:
        assert one.passed is passed and one.checker_error is False, one
    assert good == Verdict(True, "good", False)


@pytest.mark.parametrize("body", [
    "os = sys.modules['os']\nos.close(os.open(TARGET, os.O_WRONLY | os.O_CREAT))\nreturn {'check_code': True}",
    "sys.modules['io'].open(TARGET, 'w').write('x')\nreturn {'check_code': True}",
    "import pathlib\nreturn {'check_code': True}",
    "sys.modules['pathlib'].Path(TARGET).write_text('x')\nreturn {'check_code': True}",
    "return {'check_code': True, 'reason': open('/proc/self/environ').read()}",
    "return {'check_code': True, 'reason': open('/proc/1/cmdline').read()}",
    "imp = re.__builtins__['__import__']\nimp('ctypes').CDLL(None)\nreturn {'check_code': True}",
    "c = [k for k in ().__class__.__mro__[1].__subclasses__() if k.__name__ == '_wrap_close'][0]\n"
    "c.__init__.__globals__['system']('true')\nreturn {'check_code': True}",
])
def test_other_ways_to_the_files_are_refused(isolation: str, body: str) -> None:
    target = Path(tempfile.gettempdir()) / f"cpif-escape-{uuid.uuid4().hex}"
    bad, good = run_pair(isolation, checker(body.replace("TARGET", repr(str(target)))))
    refused(bad)
    assert not target.exists()
    assert good == Verdict(True, "good", False)


def test_ctrl_c_while_workers_start_leaves_no_work_dir(tmp_path: Path) -> None:
    """Ctrl-C as the pool starts: a worker not yet in the pool was left with its temporary work dir.

    Waits for the child's exit and for the folder to empty, each with a deadline no loaded machine
    reaches; a child still running when the test fails is killed."""
    import os
    import signal
    import subprocess
    import sys

    from .test_cpif_sandbox import CTRL_C, LOADED_S, _wait_for

    env = {**os.environ, "TMPDIR": str(tmp_path)}
    for delay in (0.05, 0.2, 0.5):
        child = subprocess.Popen([sys.executable, "-c", CTRL_C, "process", "re"], stdout=subprocess.PIPE,
                                 text=True, env=env)
        try:
            assert child.stdout is not None and child.stdout.readline() == "started\n"
            time.sleep(delay)  # where in the start-up the signal lands, not a deadline
            child.send_signal(signal.SIGINT)
            child.wait(timeout=LOADED_S)
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
    _wait_for(lambda: not any(tmp_path.glob("clue-cpif-*")), "every work dir removed")
