"""A hostile checker suite through the whole sandbox, in both isolations, with a secret in clue-core's environment.

Each checker tried, before the kernel fences, what got past the audit hook: paths resolved
from a directory fd (its cwd 25 folders deep, the fd at the top: inside for the hook,
``/etc/passwd`` for the kernel), ``/proc/<clue-core's pid>/environ`` found through
``/proc/<pid>/stat``, a forged "passed" reply after catching a refusal, a device node, a file
left for the next check. Every one must be a checker error, every victim file untouched,
and the fake API key of the process that runs the pool nowhere in a verdict. The pool runs
in a subprocess started with that key in its environment, as clue-core is (``/proc/<pid>/environ``
shows a process's environment as it started, so setting it in this process would test nothing).
"""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from .test_cpif_sandbox import ISOLATIONS, checker

DEEP = """
os = sys.modules['os']
top = os.getcwd()
for _ in range(25):
    os.mkdir('d'); os.chdir('d')
fd = os.open(top, os.O_RDONLY)
UP = '../' * 25
"""
PPID = """
stat = os.read(os.open(UP + 'proc/self/stat', os.O_RDONLY, dir_fd=fd), 500).decode()
worker = int(stat.rsplit(')', 1)[1].split()[1])
stat = os.read(os.open(UP + 'proc/%d/stat' % worker, os.O_RDONLY, dir_fd=fd), 500).decode()
pool = int(stat.rsplit(')', 1)[1].split()[1])
"""
PASS = "return {'check_code': True}"
#: A path object that names the victim to os.remove's own conversion, then a file inside to the audit hook's.
SWAP = """
class Swap:
    calls = []
    def __fspath__(self):
        self.calls.append(1)
        return '/' + VICTIM if len(self.calls) == 1 else 'inside.txt'
"""
FORGE = """
for n in range(3, 64):
    try:
        os.write(n, b'{"passed": true, "reason": "forged", "checker_error": false}')
    except OSError:
        pass
os._exit(0)
"""


def reads(expression: str) -> str:
    return f"return {{'check_code': True, 'reason': {expression}}}"


#: name -> checker body (after DEEP); VICTIM is a file of the test's, as a path without its leading '/'.
ATTACKS = {
    "dirfd_open": reads("os.read(os.open(UP + 'etc/passwd', os.O_RDONLY, dir_fd=fd), 99).decode()"),
    "dirfd_home": reads("os.read(os.open(UP + VICTIM, os.O_RDONLY, dir_fd=fd), 99).decode()"),
    "dirfd_scandir": "sub = os.open(UP + 'etc', os.O_RDONLY, dir_fd=fd)\n" + reads("repr(list(os.scandir(sub)))"),
    "scandir_fd": reads("repr([e.name for e in os.scandir(fd)])"),
    "dirfd_unlink": f"os.unlink(UP + VICTIM, dir_fd=fd)\n{PASS}",
    "dirfd_mkdir": f"os.mkdir(UP + VICTIM + '.made', dir_fd=fd)\n{PASS}",
    "dirfd_write": f"os.close(os.open(UP + VICTIM + '.new', os.O_WRONLY | os.O_CREAT, dir_fd=fd))\n{PASS}",
    "dirfd_rename": f"os.rename(UP + VICTIM, 'stolen', src_dir_fd=fd, dst_dir_fd=fd)\n{PASS}",
    "dirfd_rename_out": "open('mine', 'w').write('x')\n"
                        f"os.rename('mine', UP + VICTIM + '.moved', dst_dir_fd=fd)\n{PASS}",
    "proc_fd_dotdot": reads("open('/proc/self/fd/%d/' % fd + UP + 'etc/passwd').read()"),
    "parent_environ": PPID + "env = os.read(os.open(UP + 'proc/%d/environ' % pool, os.O_RDONLY, dir_fd=fd), 99999)\n"
                      + reads("env.decode('utf-8', 'replace')"),
    "parent_environ_plain": reads("open('/proc/%d/environ' % os.getppid()).read()"),
    "own_environ": reads("os.read(os.open(UP + 'proc/self/environ', os.O_RDONLY, dir_fd=fd), 9999).decode()"),
    "forged_reply": "try:\n    open('/etc/passwd').read()\nexcept BaseException:\n    pass\n" + FORGE,
    "forged_after_kernel": "try:\n    os.open(UP + 'etc/passwd', os.O_RDONLY, dir_fd=fd)\nexcept BaseException:\n"
                           "    pass\n" + reads("'forged'"),
    "pathlike_swap": SWAP + f"try:\n    os.remove(Swap())\nexcept OSError:\n    pass\n{PASS}",
    "raising_repr": "class Evil:\n    def __fspath__(self):\n        return '/' + VICTIM\n"
                    "    def __repr__(self):\n        raise ValueError('no repr')\n"
                    f"try:\n    os.remove(Evil())\nexcept BaseException:\n    pass\n{PASS}",
    "mknod": f"os.mknod('vda', 0o060600, os.makedev(253, 0))\n{PASS}",
    "mknod_char": f"os.mknod('mem', 0o020600, os.makedev(1, 1))\n{PASS}",
}
LEAVE = f"def check_response(response):\n    open('left.bin', 'wb').write(b'x' * 2 ** 20)\n    {PASS}\n"
FIND = ("def check_response(response):\n    os = sys.modules['os']\n"
        "    return {'check_code': os.listdir('.') == [], 'reason': repr(os.listdir('.'))}\n")
GOOD = "def check_response(response):\n    return {'check_code': response == 'ok', 'reason': 'good'}\n"

SCRIPT = """
import json, sys
from clue_tasks_superclue.sandbox import Check, Limits, Sandbox
checks = json.loads(sys.argv[2])
with Sandbox(Limits(isolation=sys.argv[1], workers=1, timeout=60, cpu=20)) as box:
    verdicts = box.run([Check(code, ('ok', 'ok')) for code in checks])
print(json.dumps({'verdicts': [v.as_dict() for v in verdicts], 'fences': box.fences}))
"""


def run_pool(isolation: str, checks: list[str], secret: str) -> dict:
    """The checks on one worker, in a subprocess whose environment holds ``secret`` (as clue-core's might)."""
    env = {"PATH": "/usr/bin:/bin", "OPENAI_API_KEY": secret, "HF_TOKEN": secret + "-hf"}
    out = subprocess.run([sys.executable, "-c", SCRIPT, isolation, json.dumps(checks)], capture_output=True,
                         text=True, timeout=600, env=env)
    assert out.returncode == 0, out.stderr
    assert secret not in out.stdout + out.stderr
    return json.loads(out.stdout)


@pytest.fixture(params=ISOLATIONS)
def isolation(request: pytest.FixtureRequest) -> str:
    return request.param


def test_every_escape_is_a_checker_error(isolation: str, tmp_path: Path) -> None:
    victim = tmp_path / "home" / "secret.txt"
    victim.parent.mkdir()
    victim.write_text("PRIVATE-HOME-FILE", encoding="utf-8")
    secret = f"sk-test-{uuid.uuid4().hex}"
    names = list(ATTACKS)
    checks = []
    for name in names:
        body = ATTACKS[name].replace("VICTIM", repr(str(victim).lstrip("/")))
        checks += [checker(DEEP + body), GOOD]
    found = run_pool(isolation, checks, secret)
    verdicts = found["verdicts"]
    for index, name in enumerate(names):
        bad, good = verdicts[2 * index], verdicts[2 * index + 1]
        assert bad["passed"] is False and bad["checker_error"] is True, (name, bad)
        assert "root:" not in bad["reason"] and "PRIVATE" not in bad["reason"], (name, bad)
        assert good == {"passed": True, "reason": "good", "checker_error": False}, (name, good)
    assert victim.read_text(encoding="utf-8") == "PRIVATE-HOME-FILE"
    assert sorted(p.name for p in victim.parent.iterdir()) == ["secret.txt"]
    assert found["fences"]["isolation"] == isolation and found["fences"]["seccomp"] == "on"


def test_a_check_finds_nothing_the_last_one_left(isolation: str) -> None:
    found = run_pool(isolation, [LEAVE, FIND, LEAVE, FIND], f"sk-test-{uuid.uuid4().hex}")
    assert [v["passed"] for v in found["verdicts"]] == [True, True, True, True], found


FINE = """
os = sys.modules['os']
open('f', 'w').write('x')
os.utime('f', (1, 2))
os.chmod('f', 0o600)
os.rename('f', 'g')
os.mkdir('sub')
os.remove('g')
os.rmdir('sub')
return {'check_code': sorted(os.listdir('.')) == [], 'reason': 'fine'}
"""


def test_ordinary_file_work_in_the_work_dir_is_fine(isolation: str) -> None:
    found = run_pool(isolation, [checker(FINE)], f"sk-test-{uuid.uuid4().hex}")
    assert found["verdicts"] == [{"passed": True, "reason": "fine", "checker_error": False}], found
