"""The sandbox's worker process: runs each dataset checker in a fresh, fenced child process.

Started by :mod:`clue_tasks_superclue.sandbox` as ``python -I -B sandbox_worker.py CONFIG``
(standard library only: inside bubblewrap nothing of the repository is visible but this
file). The worker itself never runs a checker: it imports the allowlisted modules once, then
for every request forks a child that puts up its fences, runs the checker, writes its reply
to a pipe and exits. Whatever a checker does to the interpreter (patched ``re`` or ``json``,
signal handlers, a recursion limit, open files, threads) dies with its child, so no check
sees what another left behind, and the order of checks over the workers cannot change a
verdict. The child's fences, put up before the checker's code runs and never taken down:

* resource limits: address space, file size, no core files, no new processes (RLIMIT_NPROC
  0, which binds a non-root user), and CPU time (a soft limit, then a hard one a second
  later, so a checker that ignores SIGXCPU is killed all the same);
* a seccomp filter (Linux x86-64 and aarch64, through ctypes): ``fork``, ``vfork``,
  ``clone``, ``clone3``, ``execve``, ``execveat``, ``socket``, ``kill`` and ``ptrace`` fail
  with EPERM, for root too and for code that slips past the audit hook;
* an audit hook (``sys.addaudithook``, a closure no checker holds a reference to) that
  refuses sockets, new processes, ctypes, signals to other processes, rlimit changes,
  frame introspection (``sys._getframe``, ``tb_frame``, ``gi_frame``: the way to the
  worker's state), imports outside the allowlist, writes anywhere but the work directory
  and reads outside the read roots (the Python installation and system libraries).

The child's standard input is /dev/null (a checker cannot read the request stream) and it
has no handle on the protocol pipe; the worker checks the child's reply, cuts a long reason
and answers one JSON line per request. A checker runs as the official evaluator runs it
(``exec`` with the evaluator's module names as globals and a separate locals dict), see
:mod:`clue_tasks_superclue.cpif_rules`.
"""

from __future__ import annotations

import builtins
import contextlib
import importlib
import io
import json
import os
import re
import resource
import signal
import sys
from typing import Any

#: What the evaluator's module defines that a checker may use without importing it
#: (``tqdm`` is the evaluator's progress bar; no checker uses it).
EVALUATOR_GLOBALS = {"json": json, "re": re, "sys": sys}
#: The longest reason kept (characters); the longest an official checker writes is far shorter.
REASON_CHARS = 2000
_REPLY_BYTES = 1 << 16
_BLOCKED_PREFIXES = ("socket.", "subprocess.", "os.exec", "os.spawn", "os.posix_spawn", "os.fork", "os.system",
                     "os.kill", "os.killpg", "pty.", "ctypes.", "resource.setrlimit", "resource.prlimit", "winreg.",
                     "_winapi.", "sys.setprofile", "sys.settrace", "os.putenv", "os.unsetenv", "mmap.",
                     "sys._getframe", "sys._current_frames", "sys._current_exceptions", "sys.addaudithook")
_FRAME_ATTRIBUTES = frozenset({"tb_frame", "gi_frame", "cr_frame", "ag_frame", "f_back"})
_PATH_WRITES = ("os.remove", "os.rename", "os.rmdir", "os.mkdir", "os.chmod", "os.chown", "os.link", "os.symlink",
                "os.truncate", "os.utime", "shutil.rmtree", "shutil.copyfile", "shutil.move", "os.chflags")
_PATH_READS = ("os.listdir", "os.scandir", "os.chdir", "glob.glob", "os.walk")


class Refused(PermissionError):
    """What the audit hook raises: the checker tried something the sandbox does not allow."""


def put_up_fence(work_dir: str, read_roots: list[str], imports: list[str]) -> tuple[list[str], Any]:
    """Install the child's audit hook for good; the refusals it made and the checker's ``__import__``.

    The hook's state lives in this closure and nowhere a checker can name: there is no switch
    to turn it off, and the roots are tuples. The import depth (an allowed package's own
    imports are its business) is reachable through ``__import__.__closure__``; a checker
    that raises it imports more modules, and the open, write and process fences still hold.
    """
    work = os.path.realpath(work_dir)
    writable = (work,)
    readable = (*[os.path.realpath(p) for p in read_roots], work)
    allowed = frozenset(imports)
    refused: list[str] = []
    depth = [0]

    def refuse(what: str) -> None:
        refused.append(what)
        raise Refused(f"sandbox: {what} is not allowed")

    def inside(path: Any, roots: tuple[str, ...]) -> bool:
        if isinstance(path, int):
            return False
        try:
            real = os.path.realpath(os.fsdecode(path))
        except (TypeError, ValueError):
            return False
        return any(real == root or real.startswith(root.rstrip("/") + "/") for root in roots)

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event.startswith(_BLOCKED_PREFIXES):
            refuse(event)
        if event == "object.__getattr__" and len(args) > 1 and args[1] in _FRAME_ATTRIBUTES:
            refuse(f"reading {args[1]}")
        if event == "open":
            path, mode, flags = [*args, None, None, None][:3]
            writes = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
                isinstance(flags, int) and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC))
            if writes and not inside(path, writable):
                refuse(f"writing {path!r}")
            if not writes and not inside(path, readable):
                refuse(f"reading {path!r}")
        elif event in _PATH_WRITES:
            for path in args[:2]:
                if isinstance(path, (str, bytes, os.PathLike)) and not inside(path, writable):
                    refuse(f"{event} {path!r}")
        elif event in _PATH_READS:
            path = args[0] if args else "."
            if path is not None and not inside(path if path != "" else ".", readable):
                refuse(f"{event} {path!r}")
        elif event == "import" and not depth[0] and str(args[0]).split(".")[0] not in allowed:
            refuse(f"importing {args[0]!r}")

    def guarded_import(name: str, globals: Any = None, locals: Any = None, fromlist: Any = (), level: int = 0) -> Any:
        """The checker's ``__import__``: top-level names on the allowlist only."""
        if level != 0 or name.split(".")[0] not in allowed:
            refuse(f"importing {name!r}")
        depth[0] += 1
        try:
            return builtins.__import__(name, globals, locals, fromlist, level)
        finally:
            depth[0] -= 1

    sys.addaudithook(hook)
    return refused, guarded_import


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
    """The limits that hold for the worker and every child (CPU and processes are the child's)."""
    limits = [(resource.RLIMIT_AS, memory_mb * 2**20), (resource.RLIMIT_FSIZE, file_mb * 2**20),
              (resource.RLIMIT_CORE, 0)]
    for which, value in limits:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(which, (value, value))


def run_check(code: str, values: list[str | None], errors: list[str | None], imports: Any) -> dict[str, Any]:
    """The evaluator's try/except around two ``exec``\\ s, on already parsed answer values (in the child)."""
    refused, guarded_import = imports
    checker_builtins = dict(vars(builtins))
    checker_builtins["__import__"] = guarded_import
    namespace: dict[str, Any] = {"__name__": "__main__", "__builtins__": checker_builtins, **EVALUATOR_GLOBALS}
    local: dict[str, Any] = {"check_code": code}
    source = code + "\n\nresponse = __cpif_answer__\nresult = check_response(response)\n"
    failure = ""
    for value, parse_error in zip(values, errors):
        if value is None:  # the evaluator's exec would fail to compile this quoting of the answer
            failure = parse_error or "SyntaxError"
            continue
        local["__cpif_answer__"] = value
        try:
            exec(compile(source, "<check_code>", "exec"), namespace, local)
            break
        except BaseException as error:  # the evaluator's bare except, SystemExit included
            failure = f"{type(error).__name__}: {error}"
    else:
        return _reply(False, f"checker error: {failure}", True, refused)
    result = local.get("result")  # the evaluator's locals().get('result')
    try:  # the evaluator's `s["check_code"] == True`, duck-typed: None, a str, a dict without the key raise
        passed = bool(result["check_code"] == True)  # noqa: E712 - 1 and 1.0 pass there too
        reason = result.get("reason", "") if isinstance(result, dict) else ""
        reason = str.__str__(reason) if isinstance(reason, str) else repr(reason)
    except BaseException as error:
        return _reply(False, f"checker error: the result {type(result).__name__} has no check_code "
                             f"({type(error).__name__}: {error})", True, refused)
    return _reply(passed, reason, False, refused)


def _reply(passed: bool, reason: str, error: bool, refused: list[str]) -> dict[str, Any]:
    if refused:  # a refusal the checker caught and hid still makes the check an error
        return {"passed": False, "reason": f"checker error: sandbox refused {refused[0]}", "checker_error": True}
    return {"passed": passed, "reason": reason[:REASON_CHARS], "checker_error": error}


def child(config: dict[str, Any], request: dict[str, Any] | None, out: int) -> None:
    """In the forked child: fences up for good, one check, its reply on ``out``; never returns."""
    try:
        null = os.open(os.devnull, os.O_RDWR)
        os.dup2(null, 0)  # the request stream is the worker's, not the checker's
        sys.stdin, sys.stdout = io.StringIO(""), io.StringIO()
        die_with_parent()
        cpu = max(1, int(float(config["cpu"]) + 0.999))
        for which, value in ((resource.RLIMIT_CPU, (cpu, cpu + 1)), (resource.RLIMIT_NPROC, (0, 0))):
            with contextlib.suppress(ValueError, OSError):
                resource.setrlimit(which, value)
        seccomp = install_seccomp() if config.get("seccomp", True) else "off"
        if request is None:  # the start-up probe: can the fences go up here?
            reply: dict[str, Any] = {"seccomp": seccomp}
        else:
            fence = put_up_fence(config["work_dir"], config["read_roots"], config["imports"])
            reply = run_check(request["code"], request["values"], request["errors"], fence)
        data = json.dumps(reply).encode("utf-8")
        while data:
            data = data[os.write(out, data):]
    finally:
        os._exit(0)


def in_child(config: dict[str, Any], request: dict[str, Any] | None, closing: list[int]) -> dict[str, Any]:
    """Fork, let :func:`child` run, and check what it wrote; a child that died is a checker error."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        for fd in (read, *closing):
            os.close(fd)
        child(config, request, write)
    os.close(write)
    data = bytearray()
    with os.fdopen(read, "rb") as pipe:
        while chunk := pipe.read(_REPLY_BYTES):
            if len(data) < _REPLY_BYTES:
                data += chunk
    _, status = os.waitpid(pid, 0)
    try:
        reply = json.loads(data)
    except ValueError:
        reply = None
    if request is None:
        return reply if isinstance(reply, dict) else {"seccomp": "the probe child died"}
    if not (isinstance(reply, dict) and isinstance(reply.get("passed"), bool) and isinstance(reply.get("reason"), str)
            and isinstance(reply.get("checker_error"), bool)):
        return {"passed": False, "reason": f"checker error: the checker's process {_ended(status)}",
                "checker_error": True}
    return {"passed": reply["passed"], "reason": reply["reason"][:REASON_CHARS],
            "checker_error": reply["checker_error"]}


def _ended(status: int) -> str:
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        name = signal.Signals(number).name if number in signal.Signals._value2member_map_ else str(number)
        return f"was killed by {name}" + (" (the CPU limit)" if name in ("SIGXCPU", "SIGKILL") else "")
    return (f"ended without a reply (exit status {os.WEXITSTATUS(status)}; a resource limit, "
            "or a checker that broke out)")


def main() -> None:
    config = json.loads(sys.argv[1])
    os.chdir(config["work_dir"])
    protocol = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    sys.stdout = io.StringIO()
    die_with_parent()
    set_limits(int(config["memory_mb"]), int(config["file_mb"]))
    for name in config["imports"]:  # once here, so that no child pays for loading pypinyin
        with contextlib.suppress(Exception):
            importlib.import_module(name)
    closing = [protocol.fileno()]
    probe = in_child(config, None, closing)
    protocol.write(json.dumps({"ready": True, "seccomp": probe.get("seccomp")}) + "\n")
    for line in sys.stdin:
        request = json.loads(line)
        reply = in_child(config, request, closing)
        reply["id"] = request["id"]
        protocol.write(json.dumps(reply) + "\n")  # ASCII: a lone surrogate cannot break it


if __name__ == "__main__":
    main()
