"""The sandbox's worker process: runs each dataset checker in a fresh, fenced child process.

Started by :mod:`clue_tasks_superclue.sandbox` as ``python -I -B sandbox_worker.py CONFIG``
(standard library only: inside bubblewrap nothing of the repository is visible but this
file and the three fence modules beside it). The worker itself never runs a checker: it
imports the allowlisted modules once, then for every request makes a fresh, empty work dir
and forks a child that puts up its fences, runs the checker, writes its reply to a pipe and
exits; the dir is removed after it. Whatever a checker does to the interpreter or its dir
(patched ``re``, signal handlers, open files, a 16 MB file left behind) dies with its child,
so the order of checks over the workers cannot change a verdict. The child's fences, put up
before the checker's code runs and never taken down, in this order:

* privileges (:mod:`sandbox_privileges`): a child that starts with capabilities (root)
  becomes uid 65534 with no groups and no capabilities, so no ``/proc/<pid>/environ`` of
  clue-core is readable to it;
* ``PR_SET_NO_NEW_PRIVS``, then Landlock (:mod:`sandbox_landlock`, where the kernel has it):
  reads beneath the read roots and the work dir only, writes beneath the work dir only;
* seccomp (:mod:`sandbox_seccomp`): the process is killed (SIGSYS) for process creation,
  sockets, signals, device nodes, mounts, io_uring and any path call with a directory fd;
* resource limits: address space, file size, no core files, no new processes, CPU time (a
  soft limit, then a hard one a second later, so ignoring SIGXCPU does not help);
* an audit hook (``sys.addaudithook``, a closure no checker holds a reference to) that
  refuses sockets, new processes, ctypes, signals to other processes, rlimit changes,
  frame introspection (``sys._getframe``, ``tb_frame``, ``gi_frame``: the way to the
  worker's state), imports outside the allowlist, writes anywhere but the work directory
  and reads outside the read roots (the Python installation and system libraries). A
  refusal ends the child at once (``REFUSED_EXIT``): nothing to catch.

A fence that cannot go up in the start-up probe (no seccomp, a drop that left a capability)
makes the worker report the problem and clue-core refuse to run checkers. The child's
standard input is /dev/null (a checker cannot read the request stream) and it has no handle
on the protocol pipe. The worker judges a child by its exit status first: only one that
exited 0 has its reply read, so a killed or refused checker is a checker error whatever it
wrote. A checker runs as the official evaluator runs it (``exec`` with the evaluator's
module names as globals and a separate locals dict), see :mod:`clue_tasks_superclue.cpif_rules`.
"""

from __future__ import annotations

import builtins
import contextlib
import ctypes
import importlib
import io
import json
import os
import re
import resource
import shutil
import signal
import sys
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # the fence modules beside this file, then out
try:
    import sandbox_landlock
    import sandbox_privileges
    import sandbox_seccomp
finally:
    del sys.path[0]

#: What the evaluator's module defines that a checker may use without importing it
#: (``tqdm`` is the evaluator's progress bar; no checker uses it).
EVALUATOR_GLOBALS = {"json": json, "re": re, "sys": sys}
#: The longest reason kept (characters); the longest an official checker writes is far shorter.
REASON_CHARS = 2000
_REPLY_BYTES = 1 << 16
#: The exit status of a child whose audit hook refused something (the worker makes it a checker error).
REFUSED_EXIT = 86
_BLOCKED_PREFIXES = ("socket.", "subprocess.", "os.exec", "os.spawn", "os.posix_spawn", "os.fork", "os.system",
                     "os.kill", "os.killpg", "pty.", "ctypes.", "resource.setrlimit", "resource.prlimit", "winreg.",
                     "_winapi.", "sys.setprofile", "sys.settrace", "os.putenv", "os.unsetenv", "mmap.",
                     "sys._getframe", "sys._current_frames", "sys._current_exceptions", "sys.addaudithook")
_FRAME_ATTRIBUTES = frozenset({"tb_frame", "gi_frame", "cr_frame", "ag_frame", "f_back"})
_PATH_WRITES = ("os.remove", "os.rename", "os.rmdir", "os.mkdir", "os.chmod", "os.chown", "os.link", "os.symlink",
                "os.truncate", "os.utime", "shutil.rmtree", "shutil.copyfile", "shutil.move", "os.chflags")
_TWO_PATHS = frozenset({"os.rename", "os.link", "os.symlink", "shutil.copyfile", "shutil.move"})
_PATH_READS = ("os.listdir", "os.scandir", "os.chdir", "glob.glob", "os.walk")


def put_up_fence(work_dir: str, read_roots: list[str], imports: list[str], out: int) -> Any:
    """Install the child's audit hook for good; the checker's ``__import__``.

    A refusal ends the child at once: the hook writes what it refused on ``out`` (the reply
    pipe) and calls ``os._exit(REFUSED_EXIT)``, so a checker that catches nothing still gets
    no chance to write a forged "passed" reply, and the worker decides from the exit status,
    which no checker code can change afterwards. The hook's state lives in this closure and
    nowhere a checker can name: there is no switch to turn it off, and the roots are tuples.
    The import depth (an allowed package's own imports are its business) is reachable through
    ``__import__.__closure__``; a checker that raises it imports more modules, and the open,
    write and process fences still hold.
    """
    work = os.path.realpath(work_dir)
    writable = (work,)
    readable = (*[os.path.realpath(p) for p in read_roots], work)
    allowed = frozenset(imports)
    depth = [0]
    exit_now, write, dumps = os._exit, os.write, json.dumps  # bound here: a checker patching os changes nothing

    def refuse(what: str) -> None:
        try:
            write(out, dumps({"refused": what[:200]}).encode("utf-8"))
        finally:
            exit_now(REFUSED_EXIT)

    def inside(path: Any, roots: tuple[str, ...]) -> bool:
        # only a plain str or bytes: a path object's __fspath__ is the checker's code, and may name one file to
        # this check and another to the open that follows (an int is a directory fd: refused too)
        if type(path) not in (str, bytes):
            return False
        try:
            real = os.path.realpath(os.fsdecode(path))
        except (TypeError, ValueError):
            return False
        return any(real == root or real.startswith(root.rstrip("/") + "/") for root in roots)

    def shown(path: Any) -> str:
        return repr(path) if type(path) in (str, bytes, int) else "a path object"  # no checker __repr__ runs here

    def hook(event: str, args: tuple[Any, ...]) -> None:
        try:
            check(event, args)
        except BaseException:  # an exception in the hook would abort the operation but let the checker go on
            refuse(f"{event} (the audit hook could not check it)")

    def check(event: str, args: tuple[Any, ...]) -> None:
        if event.startswith(_BLOCKED_PREFIXES):
            refuse(event)
        if event == "object.__getattr__" and len(args) > 1 and args[1] in _FRAME_ATTRIBUTES:
            refuse(f"reading {args[1]}")
        if event == "open":
            path, mode, flags = [*args, None, None, None][:3]
            writes = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
                isinstance(flags, int) and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC))
            if writes and not inside(path, writable):
                refuse(f"writing {shown(path)}")
            if not writes and not inside(path, readable):
                refuse(f"reading {shown(path)}")
        elif event in _PATH_WRITES:
            for path in args[:2] if event in _TWO_PATHS else args[:1]:
                if not inside(path, writable):
                    refuse(f"{event} {shown(path)}")
        elif event in _PATH_READS:
            path = args[0] if args else "."
            if path is not None and not inside(path if path != "" else ".", readable):
                refuse(f"{event} {shown(path)}")
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
    return guarded_import


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


def run_check(code: str, values: list[str | None], errors: list[str | None], guarded_import: Any) -> dict[str, Any]:
    """The evaluator's try/except around two ``exec``\\ s, on already parsed answer values (in the child)."""
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
        return _reply(False, f"checker error: {failure}", True)
    result = local.get("result")  # the evaluator's locals().get('result')
    try:  # the evaluator's `s["check_code"] == True`, duck-typed: None, a str, a dict without the key raise
        passed = bool(result["check_code"] == True)  # noqa: E712 - 1 and 1.0 pass there too
        reason = result.get("reason", "") if isinstance(result, dict) else ""
        reason = str.__str__(reason) if isinstance(reason, str) else repr(reason)
    except BaseException as error:
        return _reply(False, f"checker error: the result {type(result).__name__} has no check_code "
                             f"({type(error).__name__}: {error})", True)
    return _reply(passed, reason, False)


def _reply(passed: bool, reason: str, error: bool) -> dict[str, Any]:
    return {"passed": passed, "reason": reason[:REASON_CHARS], "checker_error": error}


def kernel_fences(config: dict[str, Any], work_dir: str) -> dict[str, str]:
    """Privileges dropped, no_new_privs, Landlock, seccomp, in that order; what held. Raises OSError if one fails."""
    libc = ctypes.CDLL(None, use_errno=True)
    held = {"privileges": sandbox_privileges.drop(int(config.get("uid", 65534)), libc)}
    if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS: Landlock's and seccomp's condition
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
    held["landlock"] = sandbox_landlock.restrict(config["read_roots"], work_dir, libc)
    why = sandbox_seccomp.install(libc)
    if why is not None:
        raise OSError(f"seccomp: {why}")
    held["seccomp"] = "on"
    return held


def probe(work_dir: str) -> str | None:
    """In the probe child, behind every fence: can a checker still do what checkers do? None, or what fails."""
    try:
        with open(os.path.join(work_dir, "probe.txt"), "w", encoding="utf-8") as file:
            file.write("x")
        with open(re.__file__, "rb") as file:  # the Python installation, as a lazy import reads it
            file.read(1)
    except OSError as error:
        return f"behind the fences a checker could not {error}"
    return None


def child(config: dict[str, Any], request: dict[str, Any] | None, work_dir: str, out: int) -> None:
    """In the forked child: fences up for good, one check, its reply on ``out``; never returns."""
    try:
        os.chdir(work_dir)
        null = os.open(os.devnull, os.O_RDWR)
        os.dup2(null, 0)  # the request stream is the worker's, not the checker's
        sys.stdin, sys.stdout = io.StringIO(""), io.StringIO()
        die_with_parent()
        try:
            held: dict[str, Any] = kernel_fences(config, work_dir)
        except OSError as error:
            held = {"failed": f"{error}"}
        die_with_parent()  # again: a change of uid clears the parent-death signal
        cpu = max(1, int(float(config["cpu"]) + 0.999))
        for which, value in ((resource.RLIMIT_CPU, (cpu, cpu + 1)), (resource.RLIMIT_NPROC, (0, 0))):
            with contextlib.suppress(ValueError, OSError):
                resource.setrlimit(which, value)
        if request is None:  # the start-up probe: can the fences go up here, and can checkers work behind them?
            reply: dict[str, Any] = {"fences": held, "problem": held.get("failed") or probe(work_dir)}
        elif "failed" in held:
            reply = _reply(False, f"checker error: the sandbox's fences did not go up ({held['failed']})", True)
        else:
            guarded_import = put_up_fence(work_dir, config["read_roots"], config["imports"], out)
            reply = run_check(request["code"], request["values"], request["errors"], guarded_import)
        data = json.dumps(reply).encode("utf-8")
        while data:
            data = data[os.write(out, data):]
    finally:
        os._exit(0)


def check_dir(config: dict[str, Any], index: int) -> str:
    """A fresh, empty work dir for one check (nothing one check leaves is there for the next), the child's to write."""
    path = os.path.join(config["work_dir"], f"check-{index}")
    os.mkdir(path, 0o700)
    if config.get("owner") is not None:
        os.chown(path, config["owner"], config["owner"])
    return path


def in_child(config: dict[str, Any], request: dict[str, Any] | None, closing: list[int], index: int
             ) -> dict[str, Any]:
    """Fork, let :func:`child` run, and judge by its exit status, then by what it wrote.

    Only a child that exited 0 has its reply read as a verdict: one that the audit hook ended
    (REFUSED_EXIT) or the kernel killed (SIGSYS from seccomp, SIGKILL from the CPU limit) is a
    checker error whatever it wrote before, so a reply a checker forged cannot count.
    """
    work_dir = check_dir(config, index)
    try:
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:
            for fd in (read, *closing):
                os.close(fd)
            child(config, request, work_dir, write)
        os.close(write)
        data = bytearray()
        with os.fdopen(read, "rb") as pipe:
            while chunk := pipe.read(_REPLY_BYTES):
                if len(data) < _REPLY_BYTES:
                    data += chunk
        _, status = os.waitpid(pid, 0)
    finally:
        shutil.rmtree(work_dir, ignore_errors=True)
    try:
        reply = json.loads(data)
    except ValueError:
        reply = None
    if request is None:
        return reply if isinstance(reply, dict) else {"problem": f"the probe child {_ended(status)}"}
    if os.WIFEXITED(status) and os.WEXITSTATUS(status) == REFUSED_EXIT:
        what = reply.get("refused") if isinstance(reply, dict) else None
        return _reply(False, f"checker error: sandbox refused {what or 'an operation'}", True)
    if not (os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0 and isinstance(reply, dict)
            and isinstance(reply.get("passed"), bool) and isinstance(reply.get("reason"), str)
            and isinstance(reply.get("checker_error"), bool)):
        return _reply(False, f"checker error: the checker's process {_ended(status)}", True)
    return _reply(reply["passed"], reply["reason"], reply["checker_error"])


def _ended(status: int) -> str:
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        name = signal.Signals(number).name if number in signal.Signals._value2member_map_ else str(number)
        if name == "SIGSYS":
            return "was killed by SIGSYS (the kernel's seccomp filter refused a system call)"
        return f"was killed by {name}" + (" (the CPU limit)" if name in ("SIGXCPU", "SIGKILL") else "")
    return (f"ended without a reply (exit status {os.WEXITSTATUS(status)}; a resource limit, "
            "or a checker that broke out)")


def main() -> None:
    config = json.loads(sys.argv[1])
    os.chdir(config["work_dir"])
    os.environ.clear()  # nothing of anyone's environment for a checker's os.environ
    protocol = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    sys.stdout = io.StringIO()
    die_with_parent()
    set_limits(int(config["memory_mb"]), int(config["file_mb"]))
    for name in config["imports"]:  # once here, so that no child pays for loading pypinyin
        with contextlib.suppress(Exception):
            importlib.import_module(name)
    # the child drops to config["uid"] only where it starts with capabilities: then its work dirs are that uid's
    dropping = sandbox_privileges.capabilities(ctypes.CDLL(None, use_errno=True)) != 0
    config["owner"] = int(config.get("uid", 65534)) if dropping else None
    if dropping:
        os.chmod(config["work_dir"], 0o711)  # the dropped child reaches its own dir, lists nothing else
    closing = [protocol.fileno()]
    found = in_child(config, None, closing, -1)
    if dropping and found.get("problem"):
        # the unprivileged uid cannot read the Python installation or reach the work root (or the uid change
        # itself failed): uid 0 without any capability instead; a problem that stays is reported
        config["uid"], config["owner"] = -1, None
        found = in_child(config, None, closing, -2)
    protocol.write(json.dumps({"ready": True, "fences": found.get("fences"), "problem": found.get("problem")}) + "\n")
    for line in sys.stdin:
        request = json.loads(line)
        reply = in_child(config, request, closing, int(request["id"]))
        reply["id"] = request["id"]
        protocol.write(json.dumps(reply) + "\n")  # ASCII: a lone surrogate cannot break it


if __name__ == "__main__":
    main()
