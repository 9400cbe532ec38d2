"""superclue-cpif's sandbox: escape attempts are checker errors, never passes, and the run goes on.

Every attempt runs in both isolations: ``process`` (rlimits, seccomp, audit hook: every Linux
machine) and ``bwrap`` (skipped where bubblewrap is not installed or cannot start here; CI installs
it). Each case is followed by a good check in the same run, which must still pass.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from clue_tasks_superclue import sandbox
from clue_tasks_superclue.sandbox import Check, Limits, Sandbox, Verdict

GOOD = "def check_response(response):\n    return {'check_code': response == 'ok', 'reason': 'good'}\n"


def _bwrap_starts() -> bool:
    if sandbox.bwrap_path() is None:
        return False
    try:
        with Sandbox(Limits(isolation="bwrap")) as box:
            return box.run([Check(GOOD, ("ok", "ok"))])[0].passed
    except Exception:
        return False


BWRAP = _bwrap_starts()
ISOLATIONS = ["process", pytest.param("bwrap", marks=pytest.mark.skipif(
    not BWRAP, reason="bubblewrap is not installed or cannot start here: the bwrap-specific path is untested"))]


def checker(body: str) -> str:
    return "def check_response(response):\n" + textwrap.indent(textwrap.dedent(body), "    ")


def run(isolation: str, body: str, **limits: float) -> tuple[Verdict, Verdict]:
    """``body`` as a checker that would pass if it got through, then a good check."""
    with Sandbox(Limits(isolation=isolation, timeout=limits.get("timeout", 5.0), cpu=limits.get("cpu", 3.0))) as box:
        bad, good = box.run([Check(checker(body), ("ok", "ok")), Check(GOOD, ("ok", "ok"))])
    assert good == Verdict(True, "good", False)
    return bad, good


def refused(verdict: Verdict) -> None:
    assert verdict.passed is False and verdict.checker_error is True, verdict


@pytest.fixture(params=ISOLATIONS)
def isolation(request: pytest.FixtureRequest) -> str:
    return request.param


def test_reading_a_users_files(isolation: str, tmp_path: Path) -> None:
    secret = tmp_path / ".ssh" / "id_rsa"
    secret.parent.mkdir()
    secret.write_text("PRIVATE", encoding="utf-8")
    for path in (secret, Path(__file__).resolve().parents[2] / "README.md", Path.home() / ".bashrc"):
        bad, _ = run(isolation, f"""
            try:
                text = open({str(path)!r}).read()
            except Exception:
                text = ''
            return {{'check_code': True, 'reason': text}}""")
        refused(bad)


def test_writing_outside_the_work_dir(isolation: str) -> None:
    target = Path(tempfile.gettempdir()) / f"cpif-escape-{uuid.uuid4().hex}"
    bad, _ = run(isolation, f"open({str(target)!r}, 'w').write('x')\nreturn {{'check_code': True}}")
    refused(bad)
    assert not target.exists()


def test_writing_inside_the_work_dir_is_fine(isolation: str) -> None:
    body = "open('scratch.txt', 'w').write('x')\nreturn {'check_code': open('scratch.txt').read() == 'x'}"
    ok, _ = run(isolation, body)
    assert ok == Verdict(True, "", False)


def test_connecting_anywhere(isolation: str) -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(5)
    server.settimeout(0.2)
    port = server.getsockname()[1]
    seen: list[object] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            with contextlib.suppress(OSError):
                seen.append(server.accept())

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        for body in (f"import socket\nsocket.create_connection(('127.0.0.1', {port}))\nreturn {{'check_code': True}}",
                     f"s = sys.modules['_socket'].socket()\ns.connect(('127.0.0.1', {port}))\n"
                     "return {'check_code': True}"):
            bad, _ = run(isolation, body)
            refused(bad)
        time.sleep(0.3)
    finally:
        stop.set()
        thread.join()
        server.close()
    assert seen == []


@pytest.mark.parametrize("body", [
    "import subprocess\nsubprocess.run(['true'])\nreturn {'check_code': True}",
    "sys.modules['os'].system('true')\nreturn {'check_code': True}",
    "pid = sys.modules['os'].fork()\nreturn {'check_code': True}",
    "sys.modules['os'].execv('/bin/true', ['true'])",
    "import importlib\nreturn {'check_code': True}",
    # a refusal the checker catches is still an error
    "try:\n    sys.modules['os'].system('true')\nexcept Exception:\n    pass\nreturn {'check_code': True}",
])
def test_starting_processes_and_forbidden_imports(isolation: str, body: str) -> None:
    refused(run(isolation, body)[0])


def test_seccomp_refuses_fork_in_the_kernel() -> None:
    """Below the audit hook: a process with the worker's filter is killed (SIGSYS) when it forks, even as root."""
    script = (f"import sys; sys.path.insert(0, {str(Path(sandbox.WORKER).parent)!r}); import sandbox_seccomp as s\n"
              "why = s.install()\n"
              "print('installed', why, flush=True)\n"
              "import os\n"
              "try:\n    os.fork(); print('forked')\nexcept PermissionError:\n    print('refused, went on')\n")
    out = subprocess.run([sys.executable, "-I", "-c", script], capture_output=True, text=True, timeout=60)
    if "no seccomp filter" in out.stdout:
        pytest.skip(out.stdout)
    assert out.stdout == "installed None\n" and out.returncode == -signal.SIGSYS, out.stdout + out.stderr


def test_a_forever_loop_and_limits(isolation: str) -> None:
    bad, _ = run(isolation, "while True:\n    pass", timeout=2.0, cpu=60.0)
    assert bad == Verdict(False, "checker error: timed out after 2 s", True)
    refused(run(isolation, "while True:\n    try:\n        sum(range(10**6))\n    except BaseException:\n        pass",
                timeout=30.0, cpu=1.0)[0])  # the CPU limit kills it long before the wall clock
    refused(run(isolation, "x = bytearray(2 ** 33)\nreturn {'check_code': True}")[0])


def test_garbling_the_protocol(isolation: str) -> None:
    bad, _ = run(isolation, "print('{\"passed\": true}')\nsys.stdout.write('garbage')\nreturn {'check_code': False}")
    assert bad == Verdict(False, "", False)
    refused(run(isolation, "sys.modules['os']._exit(0)")[0])


def test_bwrap_hides_the_machine(tmp_path) -> None:
    """Not this file, not a file of the real /tmp, no /home, and a PID namespace of its own. (/tmp itself
    may exist inside: a Python installation under /tmp, as CI's venv is, is bound read-only there.)"""
    if not BWRAP:
        pytest.skip("bubblewrap is not installed or cannot start here: its namespaces are untested")
    marker = tmp_path / "a-file-of-the-users.txt"
    marker.write_text("secret", encoding="utf-8")
    probe = checker("os = sys.modules['os']\nreturn {'check_code': True, 'reason': repr([os.path.exists(p) for p in "
                    f"({str(Path(__file__).resolve())!r}, {str(marker)!r}, '/home')] + [os.getpid()])}}")
    with Sandbox(Limits(isolation="bwrap")) as box:
        (found,) = box.run([Check(probe, ("x", "x"))])
    exists = eval(found.reason)
    assert exists[:3] == [False, False, False] and exists[3] < 10


def test_a_bwrap_that_fails_falls_back_with_one_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox, "bwrap_path", lambda: "/bin/false")
    monkeypatch.setattr(sandbox, "_warned", set())
    with pytest.warns(RuntimeWarning, match="bubblewrap failed"), Sandbox(Limits(isolation="auto")) as box:
        assert box.run([Check(GOOD, ("ok", "ok"))] * 3) == [Verdict(True, "good", False)] * 3
        assert box.isolation == "process"


CTRL_C = """
import sys
from clue_tasks_superclue.sandbox import Check, Limits, Sandbox
box = Sandbox(Limits(isolation=sys.argv[1], timeout=120, cpu=120, workers=3, imports=("re", sys.argv[2])))
print("started", flush=True)
box.run([Check("def check_response(response):\\n    while True:\\n        pass\\n", ("x", "x"))] * 3)
"""


def _with_marker(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and marker in (entry / "cmdline").read_bytes().decode("utf-8", "replace"):
                found.append(int(entry.name))
        except OSError:
            pass
    return found


def test_ctrl_c_leaves_no_process_behind(isolation: str) -> None:
    """Waits for events (three workers up, then none), each with a deadline no loaded machine reaches."""
    marker = f"marker_{uuid.uuid4().hex}"
    child = subprocess.Popen([sys.executable, "-c", CTRL_C, isolation, marker], stdout=subprocess.PIPE, text=True)
    try:
        _wait_for(lambda: len(_with_marker(marker)) >= 3, "three sandbox processes running")
        child.send_signal(signal.SIGINT)
        child.wait(timeout=LOADED_S)
        _wait_for(lambda: _with_marker(marker) == [], "every sandbox process gone")
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        for pid in _with_marker(marker):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


#: The longest a test waits for an event (processes up, a child gone): on a machine at load 15 on two cores,
#: starting three workers that import pypinyin and langdetect took over 30 s.
LOADED_S = 300.0


def _wait_for(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + LOADED_S
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"never happened within {LOADED_S:g} s: {what}")
        time.sleep(0.05)
