"""Each kernel fence of the checker sandbox, alone: no audit hook, no bubblewrap, as the user the suite runs as.

The audit hook sees path text, not the directory fd a path is resolved from; these tests put
up one fence at a time in a fresh interpreter (the worker's modules, imported as the worker
imports them) and try what got past the hook: each must hold on its own. CI runs as root, so
the privilege tests run as root where the suite does.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from clue_tasks_superclue import sandbox

HERE = str(Path(sandbox.WORKER).parent)
PRELUDE = f"import sys, os, json, ctypes\nsys.path.insert(0, {HERE!r})\n"
#: cwd 25 folders deep, a directory fd at the top: a path that is inside from the cwd is outside from the fd.
DEEP = """
top = os.getcwd()
for _ in range(25):
    os.mkdir('d'); os.chdir('d')
fd = os.open(top, os.O_RDONLY)
UP = '../' * 25
"""


def run_script(body: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-I", "-c", PRELUDE + body], capture_output=True, text=True, cwd=cwd,
                          timeout=120, env=env)


def seccomp_only(attack: str) -> str:
    return ("import sandbox_seccomp\nwhy = sandbox_seccomp.install()\nif why: print('skip', why); sys.exit(0)\n"
            + DEEP + attack)


@pytest.mark.parametrize("attack", [
    "os.read(os.open(UP + 'etc/passwd', os.O_RDONLY, dir_fd=fd), 9)",
    "os.unlink(UP + VICTIM, dir_fd=fd)",
    "os.mkdir(UP + VICTIM + '.d', dir_fd=fd)",
    "os.rename(UP + VICTIM, 'stolen', src_dir_fd=fd, dst_dir_fd=fd)",
    "os.rename('x', UP + VICTIM + '.r', dst_dir_fd=fd) if open('x', 'w') else 0",
    "os.symlink('/etc/passwd', UP + VICTIM + '.l', dir_fd=fd)",
    "os.chmod(UP + VICTIM, 0o777, dir_fd=fd)",
    "os.readlink(UP + 'proc/self/exe', dir_fd=fd)",
    "os.chdir(fd)",
    "os.mknod('node', 0o020600, os.makedev(1, 3))",
    "os.fork()",
])
def test_seccomp_alone_kills_the_ways_around_the_cwd(tmp_path: Path, attack: str) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me", encoding="utf-8")
    work = tmp_path / "work"
    work.mkdir()
    out = run_script(seccomp_only(f"VICTIM = {str(victim).lstrip('/')!r}\n{attack}\nprint('got through')"), work)
    if out.stdout.startswith("skip"):
        pytest.skip(out.stdout)
    assert out.returncode == -31, (out.returncode, out.stdout, out.stderr)  # SIGSYS: killed, nothing to catch
    assert "got through" not in out.stdout
    assert victim.read_text(encoding="utf-8") == "keep me" and oct(victim.stat().st_mode)[-3:] != "777"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["victim.txt", "work"]


def test_seccomp_alone_still_lets_a_checker_work(tmp_path: Path) -> None:
    out = run_script(seccomp_only("open('a.txt', 'w').write('x')\nprint(open('a.txt').read(), os.stat('a.txt').st_size,"
                                  " sorted(os.listdir('.')), json.dumps({'k': 1}))"), tmp_path)
    if out.stdout.startswith("skip"):
        pytest.skip(out.stdout)
    assert out.returncode == 0 and out.stdout.split()[:2] == ["x", "1"], out.stderr


def test_landlock_alone_fences_what_a_path_reaches(tmp_path: Path) -> None:
    secret = tmp_path / "home" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text("PRIVATE", encoding="utf-8")
    work = tmp_path / "work"
    work.mkdir()
    script = ("import sandbox_landlock\nctypes.CDLL(None).prctl(38, 1, 0, 0, 0)\n"
              f"held = sandbox_landlock.restrict({sandbox.read_roots()!r}, os.getcwd())\n"
              "if held.startswith('absent'): print('skip', held); sys.exit(0)\n" + DEEP + "found = {}\n"
              f"for name, how in [('dirfd', lambda: os.open(UP + {str(secret).lstrip('/')!r}, os.O_RDONLY, dir_fd=fd)),"
              f" ('plain', lambda: open({str(secret)!r})), ('proc', lambda: open('/proc/%d/environ' % os.getppid())),"
              f" ('write', lambda: open({str(tmp_path / 'out.txt')!r}, 'w')),"
              " ('mknod', lambda: os.mknod('node', 0o020600, os.makedev(1, 3)))]:\n"
              "    try:\n        how(); found[name] = 'opened'\n    except OSError as error:\n"
              "        found[name] = error.errno\n"
              "open('inside.txt', 'w').write('ok')\nfound['inside'] = open('inside.txt').read()\n"
              "found['stdlib'] = len(open(json.__file__).read()) > 0\nprint(json.dumps(found))")
    out = run_script(script, work)
    if out.stdout.startswith("skip"):
        pytest.skip(out.stdout)
    found = json.loads(out.stdout)
    assert found == {"dirfd": 13, "plain": 13, "proc": 13, "write": 13, "mknod": 13, "inside": "ok",
                     "stdlib": True}, out.stderr
    assert not (tmp_path / "out.txt").exists()


PARENT = """
import subprocess
child = subprocess.run([sys.executable, '-I', '-c', CHILD], capture_output=True, text=True)
print(child.stdout, child.stderr)
"""
CHILD = PRELUDE + """
import sandbox_privileges
sys.path.insert(0, HOST)
libc = ctypes.CDLL(None, use_errno=True)
if sandbox_privileges.capabilities(libc) == 0:
    print('skip: not root'); sys.exit(0)
held = sandbox_privileges.drop(UID)
try:
    text = open('/proc/%d/environ' % os.getppid(), 'rb').read().decode()
except OSError as error:
    text = 'refused %d' % error.errno
print(json.dumps({'held': held, 'caps': sandbox_privileges.capabilities(libc), 'environ': text}))
"""


@pytest.mark.parametrize("uid", [65534, -1])
def test_a_root_child_gives_up_root_and_reads_no_parents_environ(tmp_path: Path, uid: int) -> None:
    """As root (CI): dropped to nobody, or kept uid 0 without capabilities, the parent's environ stays shut
    while the parent is not dumpable (as clue-core is while its pool lives)."""
    if os.geteuid() != 0:
        pytest.skip("not root: nothing to drop (CI runs as root)")
    secret = f"sk-test-{uuid.uuid4().hex}"
    parent = ("import ctypes\nctypes.CDLL(None).prctl(4, 0, 0, 0, 0)\n"  # PR_SET_DUMPABLE 0, as sandbox_host.hide
              f"CHILD = {CHILD.replace('HOST', repr(HERE)).replace('UID', str(uid))!r}\n" + PARENT)
    out = run_script(parent, tmp_path, env={"OPENAI_API_KEY": secret, "PATH": "/usr/bin:/bin"})
    found = json.loads(out.stdout.split("\n")[0])
    assert found["caps"] == 0 and found["environ"] == "refused 13", found
    assert secret not in out.stdout
    assert found["held"] == ("uid 65534, no capabilities" if uid > 0 else "uid 0, no capabilities")
