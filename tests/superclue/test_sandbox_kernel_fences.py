"""Each kernel fence of the checker sandbox, alone: no audit hook, no bubblewrap, as the user the suite runs as.

The audit hook sees path text, not the directory fd a path is resolved from; these tests put
up one fence at a time in a fresh interpreter (the worker's modules, imported as the worker
imports them) and try what got past the hook: each must hold on its own. CI runs as root, so
the privilege tests run as root where the suite does.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
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


def _readable_by_others(python: str) -> bool:
    """Whether uid 65534 could read this interpreter's standard library (every folder on the way searchable)."""
    out = subprocess.run([python, "-I", "-c", "import os; print(os.path.dirname(os.__file__))"], capture_output=True,
                         text=True, timeout=60)
    path = Path(out.stdout.strip())
    return out.returncode == 0 and all(p.stat().st_mode & 0o005 == 0o005 for p in [path, *path.parents])


def test_a_root_worker_runs_checks_as_the_sandbox_uid() -> None:
    """The worker alone (standard library only), as root, under an interpreter uid 65534 can read: the checker
    runs as 65534 with no groups, writes its own dir, and cannot read /proc/<worker>/environ."""
    if os.geteuid() != 0:
        pytest.skip("not root: nothing to drop (CI runs as root)")
    python = next((p for p in (sys.executable, "/usr/bin/python3") if os.path.exists(p) and _readable_by_others(p)),
                  None)
    if python is None:
        pytest.skip("no Python installation here that uid 65534 can read (pyenv under /root): the uid 0 path holds")
    out = subprocess.run([python, "-I", "-c", "import sys, sysconfig; print(sys.base_prefix)"], capture_output=True,
                         text=True, timeout=60)
    roots = [out.stdout.strip(), "/usr/lib", "/lib", "/dev/null", "/dev/urandom", "/dev/zero"]
    work = Path(tempfile.mkdtemp(dir="/tmp"))  # not under pytest's 0700 folder: 65534 must reach its own dir
    config = {"work_dir": str(work), "read_roots": roots, "imports": ["re", "json", "sys"], "memory_mb": 512,
              "file_mb": 16, "cpu": 5, "uid": 65534}
    code = ("def check_response(response):\n    os = sys.modules['os']\n    open('mine.txt', 'w').write('x')\n"
            "    try:\n        env = open('/proc/%d/environ' % os.getppid()).read()\n    except BaseException:\n"
            "        env = 'refused'\n"
            "    return {'check_code': True, 'reason': repr((os.getuid(), os.getgid(), os.getgroups()))}\n")
    request = json.dumps({"id": 0, "code": code, "values": ["ok", "ok"], "errors": [None, None]}) + "\n"
    plain = ("def check_response(response):\n    os = sys.modules['os']\n    open('mine.txt', 'w').write('x')\n"
             "    return {'check_code': True, 'reason': repr((os.getuid(), os.getgid(), os.getgroups()))}\n")
    request += json.dumps({"id": 1, "code": plain, "values": ["ok", "ok"], "errors": [None, None]}) + "\n"
    try:
        done = subprocess.run([python, "-I", "-B", str(sandbox.WORKER), json.dumps(config)], input=request,
                              capture_output=True, text=True, timeout=300, env={"OPENAI_API_KEY": "sk-test-worker"})
    finally:
        shutil.rmtree(work, ignore_errors=True)
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert lines[0]["ready"] is True and lines[0]["problem"] is None, (lines, done.stderr)
    assert lines[0]["fences"]["privileges"] == "uid 65534, no capabilities"
    assert lines[1]["checker_error"] is True and "sk-test" not in json.dumps(lines)  # the environ read: refused
    assert lines[2] == {"id": 1, "passed": True, "reason": "(65534, 65534, [])", "checker_error": False}, lines



def _children(pid: int) -> list[int]:
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def _running(pid: int) -> bool:
    """Alive and not a zombie (a PID 1 that reaps nothing, as in some containers, leaves the dead as zombies)."""
    try:
        state = next(line for line in Path(f"/proc/{pid}/status").read_text().splitlines() if line.startswith("State"))
    except (OSError, StopIteration):
        return False
    return "Z" not in state.split()[1]


def test_a_dropped_checker_dies_with_its_worker() -> None:
    """A change of uid clears the parent-death signal: the child sets it again after the drop, or a sleeping
    checker would outlive a worker killed with SIGKILL."""
    if os.geteuid() != 0:
        pytest.skip("not root: nothing to drop (CI runs as root)")
    python = next((p for p in (sys.executable, "/usr/bin/python3") if os.path.exists(p) and _readable_by_others(p)),
                  None)
    if python is None:
        pytest.skip("no Python installation here that uid 65534 can read (pyenv under /root)")
    out = subprocess.run([python, "-I", "-c", "import sys; print(sys.base_prefix)"], capture_output=True, text=True,
                         timeout=60)
    work = Path(tempfile.mkdtemp(dir="/tmp"))
    config = {"work_dir": str(work), "read_roots": [out.stdout.strip(), "/usr/lib", "/lib", "/dev/null"],
              "imports": ["time"], "memory_mb": 512, "file_mb": 16, "cpu": 600, "uid": 65534}
    code = "def check_response(response):\n    sys.modules['time'].sleep(3600)\n"
    worker = subprocess.Popen([python, "-I", "-B", str(sandbox.WORKER), json.dumps(config)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    checker_pid = None
    try:
        assert worker.stdin is not None and worker.stdout is not None
        ready = json.loads(worker.stdout.readline())
        assert ready["fences"]["privileges"] == "uid 65534, no capabilities", ready
        worker.stdin.write(json.dumps({"id": 0, "code": code, "values": ["x", "x"], "errors": [None, None]}) + "\n")
        worker.stdin.flush()
        deadline = time.monotonic() + 300
        while not _children(worker.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        (checker_pid,) = _children(worker.pid)
        worker.kill()
        worker.wait(timeout=300)
        while _running(checker_pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _running(checker_pid), "the checker outlived its worker"
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait()
        if checker_pid is not None and _running(checker_pid):
            os.kill(checker_pid, 9)
        shutil.rmtree(work, ignore_errors=True)


SAME_UID = """
import ctypes, os, subprocess, sys
os.setgroups([]); os.setresgid(65534, 65534, 65534); os.setresuid(65534, 65534, 65534)  # an ordinary user
# PR_SET_DUMPABLE: 1 as an ordinary user's process is (the uid change above cleared it), 0 as clue-core while
# its pool lives (sandbox_host.hide)
ctypes.CDLL(None).prctl(4, 0 if sys.argv[1] == 'hidden' else 1, 0, 0, 0)
reader = ("import os\\ntry:\\n    print(open('/proc/%d/environ' % os.getppid()).read())\\n"
          "except OSError as e:\\n    print('refused', e.errno)")
print(subprocess.run([sys.executable, '-I', '-c', reader], capture_output=True, text=True, cwd='/').stdout)
"""


def test_a_non_dumpable_clue_core_hides_its_environ_from_its_own_uid() -> None:
    """Without root (the child keeps the user's uid): only the parent's non-dumpable flag stands between a
    same-uid process and its environ; shown both ways, as uid 65534 (started from root here, as in CI)."""
    if os.geteuid() != 0:
        pytest.skip("needs root to become uid 65534 for both processes")
    python = next((p for p in (sys.executable, "/usr/bin/python3") if os.path.exists(p) and _readable_by_others(p)),
                  None)
    if python is None:
        pytest.skip("no Python installation here that uid 65534 can read (pyenv under /root)")
    secret = f"sk-test-{uuid.uuid4().hex}"
    found = {}
    for mode in ("dumpable", "hidden"):
        out = subprocess.run([python, "-I", "-c", SAME_UID, mode], capture_output=True, text=True,
                             timeout=120, cwd="/", env={"OPENAI_API_KEY": secret})
        found[mode] = out.stdout
    assert secret in found["dumpable"]  # the threat: same uid, dumpable
    assert secret not in found["hidden"] and "refused 13" in found["hidden"], found


def _run_bpf(ops: list[tuple[int, int, int, int]], arch: int, nr: int, args: tuple[int, ...] = ()) -> int:
    """What the filter returns for one system call: a small interpreter of the classic BPF the filter uses."""
    words = {0: nr, 4: arch}
    for index, value in enumerate((*args, 0, 0, 0, 0, 0, 0)[:6]):
        words[16 + 8 * index], words[20 + 8 * index] = value & 0xFFFFFFFF, (value >> 32) & 0xFFFFFFFF
    pc, acc = 0, 0
    while True:
        code, jt, jf, k = ops[pc]
        if code == 0x20:  # BPF_LD | BPF_W | BPF_ABS
            acc, pc = words[k], pc + 1
        elif code in (0x15, 0x35):  # BPF_JMP | BPF_JEQ / BPF_JGE | BPF_K
            taken = acc == k if code == 0x15 else acc >= k
            pc += 1 + (jt if taken else jf)
        elif code == 0x06:  # BPF_RET | BPF_K
            return k
        else:
            raise AssertionError(f"unknown BPF op {code:#x}")


@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
def test_the_filter_program_on_both_machines(machine: str) -> None:
    """Both tables through the program builder, aarch64 included (no such machine here): what is killed,
    what is allowed, and a directory fd decided by its low 32 bits as the kernel reads it."""
    spec = importlib.util.spec_from_file_location("sandbox_seccomp", sandbox.WORKER.with_name("sandbox_seccomp.py"))
    assert spec is not None and spec.loader is not None
    s = importlib.util.module_from_spec(spec)  # loaded from its file, as the worker loads it, not put on sys.path
    spec.loader.exec_module(s)

    arch, killed, fd_checked, nosys = s.TABLES[machine]
    ops = s.program(machine)
    at_fdcwd, fd = 0xFFFFFFFFFFFFFF9C, 3
    for number in killed:
        assert _run_bpf(ops, arch, number, (at_fdcwd,)) == s.KILL, number
    for number, positions in fd_checked.items():
        assert _run_bpf(ops, arch, number, (at_fdcwd,) * 4) == s.ALLOW, number
        for position in positions:
            args = [at_fdcwd] * 4
            args[position] = fd
            assert _run_bpf(ops, arch, number, tuple(args)) == s.KILL, (number, position)
            args[position] = 0x12345678FFFFFF9C  # the high word is not the kernel's: still AT_FDCWD
            assert _run_bpf(ops, arch, number, tuple(args)) == s.ALLOW, (number, position)
    for number in nosys:
        assert _run_bpf(ops, arch, number) == s.ENOSYS
    read, stat, getpid = {"x86_64": (0, 262, 39), "aarch64": (63, 79, 172)}[machine]
    assert [_run_bpf(ops, arch, n, (fd,)) for n in (read, stat, getpid)] == [s.ALLOW] * 3  # fstat is newfstatat(fd)
    assert _run_bpf(ops, arch ^ 1, read) == s.KILL  # another ABI's numbers mean other calls
    if machine == "x86_64":
        assert _run_bpf(ops, arch, 0x40000000 | 257, (at_fdcwd,)) == s.KILL  # x32
    assert len(ops) < 4096
