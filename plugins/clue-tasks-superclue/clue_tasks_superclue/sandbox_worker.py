"""The sandbox's worker process: runs dataset checkers one at a time, behind its own fences.

Started by :mod:`clue_tasks_superclue.sandbox` as ``python -I -B sandbox_worker.py CONFIG``
(standard library only: inside bubblewrap nothing of the repository is visible but this
file). Before it reads its first request it puts up what a process can do to itself:

* resource limits: address space, file size, no core files, no new processes (RLIMIT_NPROC
  0, which binds a non-root user), and per check a CPU-time soft limit (SIGXCPU kills it);
* a seccomp filter (Linux x86-64 and aarch64, through ctypes): ``fork``, ``vfork``,
  ``clone``, ``clone3``, ``execve``, ``execveat``, ``socket``, ``kill`` and ``ptrace`` fail
  with EPERM, for root too and for code that slips past the audit hook;
* an audit hook (``sys.addaudithook``) that, while a checker runs, refuses sockets, new
  processes, ctypes, signals to other processes, rlimit changes, imports outside the
  allowlist, writes anywhere but the work directory and reads outside the read roots (the
  Python installation and system libraries).

Requests and replies are JSON lines on the pipes it was started with; the checker's own
prints go nowhere (file descriptor 1 points at /dev/null), so it cannot garble a reply.
A checker runs as the official evaluator runs it (``exec`` with the evaluator's module
names as globals and a separate locals dict), see :mod:`clue_tasks_superclue.cpif_rules`.
"""

from __future__ import annotations

import builtins
import contextlib
import io
import json
import os
import re
import resource
import sys
from typing import Any

#: What the evaluator's module defines that a checker may use without importing it
#: (``tqdm`` is the evaluator's progress bar; no checker uses it).
EVALUATOR_GLOBALS = {"json": json, "re": re, "sys": sys}
_BLOCKED_PREFIXES = ("socket.", "subprocess.", "os.exec", "os.spawn", "os.posix_spawn", "os.fork", "os.system",
                     "os.kill", "os.killpg", "pty.", "ctypes.", "resource.setrlimit", "resource.prlimit", "winreg.",
                     "_winapi.", "sys.setprofile", "sys.settrace", "os.putenv", "os.unsetenv", "mmap.")
_PATH_WRITES = ("os.remove", "os.rename", "os.rmdir", "os.mkdir", "os.chmod", "os.chown", "os.link", "os.symlink",
                "os.truncate", "os.utime", "shutil.rmtree", "shutil.copyfile", "shutil.move", "os.chflags")
_PATH_READS = ("os.listdir", "os.scandir", "os.chdir", "glob.glob", "os.walk")


class Refused(PermissionError):
    """What the audit hook raises: the checker tried something the sandbox does not allow."""


class Fence:
    """The audit hook's state: off while the worker does its own work, on while a checker runs."""

    def __init__(self, work_dir: str, read_roots: list[str], imports: list[str]) -> None:
        self.work_dir = os.path.realpath(work_dir)
        self.read_roots = [os.path.realpath(p) for p in read_roots] + [self.work_dir]
        self.imports = frozenset(imports)
        self.active = False
        self.importing = 0  # > 0 inside an allowed import: its own imports are its business
        self.refused: str | None = None

    def refuse(self, what: str) -> None:
        self.refused = self.refused or what
        raise Refused(f"sandbox: {what} is not allowed")

    def inside(self, path: Any, roots: list[str]) -> bool:
        if isinstance(path, int):
            return False
        try:
            real = os.path.realpath(os.fsdecode(path))
        except (TypeError, ValueError):
            return False
        return any(real == root or real.startswith(root.rstrip("/") + "/") for root in roots)

    def hook(self, event: str, args: tuple[Any, ...]) -> None:
        if not self.active:
            return
        if event.startswith(_BLOCKED_PREFIXES):
            self.refuse(event)
        if event == "open":
            path, mode, flags = [*args, None, None, None][:3]
            writes = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
                isinstance(flags, int) and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC))
            if writes and not self.inside(path, [self.work_dir]):
                self.refuse(f"writing {path!r}")
            if not writes and not self.inside(path, self.read_roots):
                self.refuse(f"reading {path!r}")
        elif event in _PATH_WRITES:
            for path in args[:2]:
                if isinstance(path, (str, bytes, os.PathLike)) and not self.inside(path, [self.work_dir]):
                    self.refuse(f"{event} {path!r}")
        elif event in _PATH_READS:
            path = args[0] if args else "."
            if path is not None and not self.inside(path if path != "" else ".", self.read_roots):
                self.refuse(f"{event} {path!r}")
        elif event == "import" and not self.importing and str(args[0]).split(".")[0] not in self.imports:
            self.refuse(f"importing {args[0]!r}")

    def guarded_import(self, name: str, globals: Any = None, locals: Any = None, fromlist: Any = (),
                       level: int = 0) -> Any:
        """The checker's ``__import__``: top-level names on the allowlist only."""
        if level != 0 or name.split(".")[0] not in self.imports:
            self.refuse(f"importing {name!r}")
        self.importing += 1
        try:
            return builtins.__import__(name, globals, locals, fromlist, level)
        finally:
            self.importing -= 1


# -- seccomp ---------------------------------------------------------------------------------

#: (audit arch, syscall numbers refused) per machine.
_SYSCALLS = {
    "x86_64": (0xC000003E, (57, 58, 56, 435, 59, 322, 41, 62, 101)),
    "aarch64": (0xC00000B7, (220, 435, 221, 281, 198, 129, 117)),
}


def install_seccomp() -> str | None:
    """Refuse process creation, sockets, kill and ptrace in the kernel; None, or why not installed."""
    import ctypes
    import platform

    machine = platform.machine()
    if machine not in _SYSCALLS or not sys.platform.startswith("linux"):
        return f"no seccomp filter for {machine}/{sys.platform}"
    arch, numbers = _SYSCALLS[machine]
    ld_abs, jeq, jge, ret = 0x20, 0x15, 0x35, 0x06
    errno_eperm, allow = 0x00050000 | 1, 0x7FFF0000
    program = [(ld_abs, 0, 0, 4), (jeq, 1, 0, arch), (ret, 0, 0, errno_eperm), (ld_abs, 0, 0, 0)]
    if machine == "x86_64":  # the x32 ABI's numbers (0x40000000 | nr) are refused whole
        program.append((jge, 0, 1, 0x40000000))
        program.append((ret, 0, 0, errno_eperm))
    for number in numbers:
        program += [(jeq, 0, 1, number), (ret, 0, 0, errno_eperm)]
    program.append((ret, 0, 0, allow))

    class Filter(ctypes.Structure):
        _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint)]

    class Program(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(Filter))]

    filters = (Filter * len(program))(*[Filter(*op) for op in program])
    fprog = Program(len(program), filters)
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
        return f"prctl(PR_SET_NO_NEW_PRIVS) failed: errno {ctypes.get_errno()}"
    if libc.prctl(22, 2, ctypes.byref(fprog), 0, 0) != 0:  # PR_SET_SECCOMP, SECCOMP_MODE_FILTER
        return f"prctl(PR_SET_SECCOMP) failed: errno {ctypes.get_errno()}"
    return None


def die_with_parent() -> None:
    """PR_SET_PDEATHSIG: the kernel kills this worker when its parent dies (even by SIGKILL)."""
    try:
        import ctypes
        import signal

        ctypes.CDLL(None).prctl(1, int(signal.SIGKILL), 0, 0, 0)
    except (OSError, AttributeError):  # not Linux: the parent closing the pipe ends the loop
        pass


def set_limits(memory_mb: int, file_mb: int) -> None:
    """The limits that hold for the worker's whole life (CPU is set per check)."""
    limits = [(resource.RLIMIT_AS, memory_mb * 2**20), (resource.RLIMIT_FSIZE, file_mb * 2**20),
              (resource.RLIMIT_CORE, 0), (resource.RLIMIT_NPROC, 0)]
    for which, value in limits:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(which, (value, value))


# -- one check -------------------------------------------------------------------------------


def run_check(fence: Fence, code: str, values: list[str | None], errors: list[str | None],
              cpu_seconds: float) -> dict[str, Any]:
    """The evaluator's try/except around two ``exec``\\ s, on already parsed answer values."""
    used = sum(resource.getrusage(resource.RUSAGE_SELF)[:2])
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_CPU, (int(used + cpu_seconds) + 1, resource.RLIM_INFINITY))
    checker_builtins = dict(vars(builtins))
    checker_builtins["__import__"] = fence.guarded_import
    namespace: dict[str, Any] = {"__name__": "__main__", "__builtins__": checker_builtins, **EVALUATOR_GLOBALS}
    local: dict[str, Any] = {"check_code": code}
    source = code + "\n\nresponse = __cpif_answer__\nresult = check_response(response)\n"
    fence.refused = None
    failure = ""
    for value, parse_error in zip(values, errors):
        if value is None:  # the evaluator's exec would fail to compile this quoting of the answer
            failure = parse_error or "SyntaxError"
            continue
        local["__cpif_answer__"] = value
        fence.active = True
        try:
            exec(compile(source, "<check_code>", "exec"), namespace, local)
            break
        except BaseException as error:  # the evaluator's bare except, SystemExit included
            failure = f"{type(error).__name__}: {error}"
        finally:
            fence.active = False
    else:
        return _reply(False, f"checker error: {failure}", True, fence)
    result = local.get("result")  # the evaluator's locals().get('result')
    fence.active = True
    try:  # the evaluator's `s["check_code"] == True`, duck-typed: None, a str, a dict without the key raise
        passed = bool(result["check_code"] == True)  # noqa: E712 - 1 and 1.0 pass there too
        reason = result.get("reason", "") if isinstance(result, dict) else ""
        reason = reason if isinstance(reason, str) else repr(reason)
    except BaseException as error:
        return _reply(False, f"checker error: the result {type(result).__name__} has no check_code "
                             f"({type(error).__name__}: {error})", True, fence)
    finally:
        fence.active = False
    return _reply(passed, reason, False, fence)


def _reply(passed: bool, reason: str, error: bool, fence: Fence) -> dict[str, Any]:
    if fence.refused:  # a refusal the checker caught and hid still makes the check an error
        return {"passed": False, "reason": f"checker error: sandbox refused {fence.refused}", "checker_error": True}
    return {"passed": passed, "reason": reason, "checker_error": error}


def main() -> None:
    config = json.loads(sys.argv[1])
    os.chdir(config["work_dir"])
    protocol = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    sys.stdout = io.StringIO()
    requests = sys.stdin
    die_with_parent()
    set_limits(int(config["memory_mb"]), int(config["file_mb"]))
    seccomp = install_seccomp() if config.get("seccomp", True) else "off"
    fence = Fence(config["work_dir"], config["read_roots"], config["imports"])
    sys.addaudithook(fence.hook)
    protocol.write(json.dumps({"ready": True, "seccomp": seccomp}) + "\n")
    for line in requests:
        request = json.loads(line)
        reply = run_check(fence, request["code"], request["values"], request["errors"], float(config["cpu"]))
        sys.stdout = io.StringIO()  # what the checker printed is dropped
        reply["id"] = request["id"]
        protocol.write(json.dumps(reply) + "\n")  # ASCII: a lone surrogate cannot break it


if __name__ == "__main__":
    main()
