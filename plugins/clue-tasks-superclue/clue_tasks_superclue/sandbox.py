"""Run a dataset's checker code on answers in reusable, fenced worker processes.

SuperCLUE-CPIFOpen ships one Python checker per prompt; running it is running a stranger's
code, so it never runs in the clue-core process. :class:`Sandbox` keeps a small pool of
worker processes (:mod:`clue_tasks_superclue.sandbox_worker`), sends each check over a
pipe as one JSON line and waits for one JSON line back, at most ``timeout`` seconds. A
worker that dies, overruns or answers garbage is killed with its whole process group and
replaced; that check is a checker error, never a pass, and the run goes on.

Where bubblewrap works (``/usr/bin/bwrap``), each worker runs inside it: new network, PID,
IPC, UTS and user namespaces, no capabilities, read-only binds of only the Python
installation and the system library folders, the root read-only, and a tmpfs as its work
directory; ``--die-with-parent`` and the PID namespace take every process of the sandbox
down with it. Where it is missing or fails to start, the worker runs as a plain process
with the same in-process fences (rlimits, seccomp, audit hook, a private temporary work
directory), and :func:`warn_once` says so once. docs/superclue.md says what holds where.
"""

from __future__ import annotations

import json
import os
import selectors
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
import time
import warnings
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from clue_core.plugin import ClueError
from clue_tasks_superclue import sandbox_host

WORKER = Path(__file__).with_name("sandbox_worker.py")
#: The fence modules the worker imports from beside itself (bound next to it inside bubblewrap).
FENCES = ("sandbox_seccomp.py", "sandbox_landlock.py", "sandbox_privileges.py")
#: The modules the 431 official checkers import (found with ast), plus the two packages two of them use.
IMPORTS = ("re", "collections", "string", "typing", "json", "sys", "langdetect", "pypinyin")
ISOLATIONS = ("auto", "bwrap", "process")
_INSIDE_WORK = "/sandbox/work"
_INSIDE_WORKER = "/sandbox/sandbox_worker.py"
_SYSTEM_DIRS = ("/usr/lib", "/usr/lib64", "/usr/lib32", "/usr/share", "/lib", "/lib64", "/lib32")
_STARTUP_S = 30.0
_LINE_BYTES = 1 << 20
_warned: set[str] = set()


@dataclass(frozen=True, slots=True)
class Limits:
    """Per-check limits and the pool's shape (the metric's ``sandbox_*`` settings)."""

    timeout: float = 10.0
    cpu: float = 5.0
    memory_mb: int = 512
    file_mb: int = 16
    workers: int = 2
    isolation: str = "auto"
    imports: tuple[str, ...] = IMPORTS
    #: the unprivileged uid (and gid) a checker child started with capabilities (root) drops to
    uid: int = 65534


@dataclass(frozen=True, slots=True)
class Check:
    """One checker on one answer: the two quotings' values (None where a quoting does not parse)."""

    code: str
    values: tuple[str | None, str | None]
    errors: tuple[str | None, str | None] = (None, None)


@dataclass(frozen=True, slots=True)
class Verdict:
    """What one check found; exactly the keys a prediction record's ``scoring`` keeps."""

    passed: bool
    reason: str
    checker_error: bool

    def as_dict(self) -> dict[str, Any]:
        return {"passed": self.passed, "reason": self.reason, "checker_error": self.checker_error}


def warn_once(message: str) -> None:
    """A warning shown once per process (the fallback is the same for every check and run)."""
    if message not in _warned:
        _warned.add(message)
        warnings.warn(message, RuntimeWarning, stacklevel=3)


def python_dirs() -> list[str]:
    """The running Python's installation: prefixes and package folders, real paths, outermost only."""
    found = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
             str(Path(os.path.realpath(sys.executable)).parent.parent)}
    found.update(p for p in (sysconfig.get_paths().get(k) for k in ("stdlib", "platstdlib", "purelib", "platlib")) if p)
    real = sorted({os.path.realpath(p) for p in found if os.path.isdir(p)} | {p for p in found if os.path.isdir(p)})
    return [p for p in real if not any(p != q and p.startswith(q.rstrip("/") + "/") for q in real)]


def read_roots() -> list[str]:
    """What a checker may read: the Python installation, system libraries, a few devices."""
    system = [p for p in _SYSTEM_DIRS if os.path.isdir(p)]
    return [*python_dirs(), *system, "/dev/null", "/dev/urandom", "/dev/zero"]


def bwrap_path() -> str | None:
    return shutil.which("bwrap")


def bwrap_command(bwrap: str) -> list[str]:
    """bubblewrap's arguments: everything the worker may see, read-only, and nothing else."""
    args = [bwrap, "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL", "--clearenv",
            "--setenv", "LANG", "C.UTF-8", "--setenv", "HOME", _INSIDE_WORK, "--setenv", "PATH", "/usr/bin:/bin",
            "--ro-bind", "/usr", "/usr"]
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", top, top]
    args += ["--ro-bind-try", "/etc/ld.so.cache", "/etc/ld.so.cache"]
    for folder in python_dirs():  # both sides of a venv's symbolic links are among them
        if not folder.startswith("/usr/"):
            args += ["--ro-bind", folder, folder]
    args += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", _INSIDE_WORK, "--ro-bind", str(WORKER), _INSIDE_WORKER]
    for name in FENCES:
        args += ["--ro-bind", str(WORKER.with_name(name)), f"/sandbox/{name}"]
    return [*args, "--remount-ro", "/", "--chdir", _INSIDE_WORK]


class Worker:
    """One worker process and its pipes; killed with its whole process group."""

    def __init__(self, limits: Limits, use_bwrap: bool) -> None:
        self.limits, self.bwrap = limits, use_bwrap
        self.stderr = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as the worker, closed in kill
        self.host_dir: str | None = None
        try:  # Ctrl-C anywhere in here leaves no work root (and a kill -9 leaves one the next pool sweeps)
            self.host_dir = None if use_bwrap else sandbox_host.work_root()
            work_dir = _INSIDE_WORK if use_bwrap else self.host_dir
            config = {"work_dir": work_dir, "read_roots": read_roots(), "imports": list(limits.imports),
                      "memory_mb": limits.memory_mb, "file_mb": limits.file_mb, "cpu": limits.cpu, "uid": limits.uid}
            worker = _INSIDE_WORKER if use_bwrap else str(WORKER)
            command = [sys.executable, "-I", "-B", worker, json.dumps(config)]
            if use_bwrap:
                command = bwrap_command(bwrap_path() or "bwrap") + command
            # the user's environment (API keys, tokens) is not the checker's, bubblewrap or not
            env = {"LANG": "C.UTF-8", "PATH": "/usr/bin:/bin", "HOME": work_dir or "/"}
            self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                            stderr=self.stderr, cwd=self.host_dir or "/", start_new_session=True,
                                            close_fds=True, env=env)
        except BaseException:
            self.stderr.close()
            if self.host_dir is not None:
                shutil.rmtree(self.host_dir, ignore_errors=True)
            raise
        self.buffer = bytearray()
        self.fences: dict[str, str] = {}
        self.why = ""

    @property
    def stdout(self) -> IO[bytes]:
        assert self.process.stdout is not None
        return self.process.stdout

    def started(self) -> bool:
        """Wait for the worker's ready line; False (and the worker killed) if it never comes."""
        line = self.read_line(time.monotonic() + _STARTUP_S)
        try:
            ready = json.loads(line) if line is not None else None
        except ValueError:
            ready = None
        if not isinstance(ready, dict) or ready.get("ready") is not True or ready.get("problem"):
            problem = ready.get("problem") if isinstance(ready, dict) else None
            if self.process.poll() is None:
                self.process.kill()
            self.process.wait()
            self.why = str(problem) if problem else self.failure()
            self.kill()
            return False
        fences = ready.get("fences")
        self.fences = {str(k): str(v) for k, v in fences.items()} if isinstance(fences, dict) else {}
        return True

    def send(self, request: dict[str, Any]) -> bool:
        assert self.process.stdin is not None
        try:
            self.process.stdin.write((json.dumps(request) + "\n").encode("utf-8"))
            self.process.stdin.flush()
            return True
        except (BrokenPipeError, OSError):
            return False

    def take_line(self) -> str | None:
        if b"\n" not in self.buffer:
            return None
        line, _, rest = self.buffer.partition(b"\n")
        self.buffer = bytearray(rest)
        return line.decode("utf-8", "replace")

    def feed(self) -> bool:
        """Read what the worker wrote; False at end of file (it died)."""
        chunk = os.read(self.stdout.fileno(), 1 << 16)
        self.buffer += chunk
        return bool(chunk) and len(self.buffer) <= _LINE_BYTES  # a worker's reply is short; a flood is garbage

    def read_line(self, deadline: float) -> str | None:
        with selectors.DefaultSelector() as selector:
            selector.register(self.stdout, selectors.EVENT_READ)
            while (line := self.take_line()) is None:
                left = deadline - time.monotonic()
                if left <= 0 or not selector.select(left) or not self.feed():
                    return None
        return line

    def failure(self) -> str:
        """The last lines the worker wrote to stderr (why it did not start)."""
        self.stderr.seek(0)
        text = self.stderr.read()[-2000:].decode("utf-8", "replace").strip()
        return text.splitlines()[-1] if text else f"exit status {self.process.poll()}"

    def kill(self) -> None:
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                self.process.kill()
        for stream in (self.process.stdin, self.process.stdout):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
        self.process.wait()
        self.stderr.close()
        if self.host_dir is not None:
            shutil.rmtree(self.host_dir, ignore_errors=True)


class Sandbox:
    """The pool: ``with Sandbox(limits) as box: verdicts = box.run(checks)``; close kills every worker."""

    def __init__(self, limits: Limits = Limits()) -> None:
        self._hidden = False
        check_isolation(limits.isolation)
        self.limits = limits
        self.use_bwrap = limits.isolation != "process" and bwrap_path() is not None
        if limits.isolation == "auto" and not self.use_bwrap:
            warn_once("sandbox: bubblewrap (bwrap) is not installed; checkers run as plain processes with "
                      "seccomp, Landlock, a dropped uid and an audit hook (see docs/superclue.md)")
        sandbox_host.sweep()
        self.workers: list[Worker] = []
        self.isolation = "bwrap" if self.use_bwrap else "process"
        #: what held in the last worker started: isolation, privileges, landlock, seccomp
        self.fences: dict[str, str] = {"isolation": self.isolation}
        sandbox_host.hide()
        self._hidden = True

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        while self.workers:
            self.workers.pop().kill()
        if self._hidden:
            self._hidden = False
            sandbox_host.unhide()

    def _start(self) -> Worker:
        worker = Worker(self.limits, self.use_bwrap)
        try:
            started = worker.started()
        except BaseException:  # Ctrl-C while it starts: it is in no pool yet, so nothing else would kill it
            worker.kill()
            raise
        if started:
            self.fences = {"isolation": self.isolation, **worker.fences}
            return worker
        why = worker.why
        if not self.use_bwrap:
            raise ClueError(f"sandbox: the checker worker did not start (no checker runs without its fences): {why}")
        if self.limits.isolation == "bwrap":
            raise ClueError(f"sandbox: bubblewrap did not start the checker worker: {why}")
        warn_once(f"sandbox: bubblewrap failed ({why}); checkers run as plain processes with seccomp, Landlock, "
                  "a dropped uid and an audit hook (see docs/superclue.md)")
        self.use_bwrap, self.isolation = False, "process"
        return self._start()

    def run(self, checks: Sequence[Check]) -> list[Verdict]:
        """Every check's verdict, in order; parallel over ``limits.workers`` processes."""
        verdicts: list[Verdict | None] = [None] * len(checks)
        pending = deque(range(len(checks)))
        idle: list[Worker] = []
        busy: dict[Worker, tuple[int, float]] = {}
        try:
            while pending or busy:
                while pending and len(busy) < max(1, self.limits.workers):
                    index = pending.popleft()
                    worker = idle.pop() if idle else self._start()
                    if worker not in self.workers:
                        self.workers.append(worker)
                    check = checks[index]
                    if worker.send({"id": index, "code": check.code, "values": list(check.values),
                                    "errors": list(check.errors)}):
                        busy[worker] = (index, time.monotonic() + self.limits.timeout)
                    else:
                        verdicts[index] = self._lost(worker, "checker error: the worker died")
                self._wait(busy, idle, verdicts)
        finally:
            if any(v is None for v in verdicts):  # interrupted (Ctrl-C): nothing may stay behind
                self.close()
        return [v for v in verdicts if v is not None]

    def _wait(self, busy: dict[Worker, tuple[int, float]], idle: list[Worker],
              verdicts: list[Verdict | None]) -> None:
        if not busy:
            return
        now = time.monotonic()
        with selectors.DefaultSelector() as selector:
            for worker in busy:
                selector.register(worker.stdout, selectors.EVENT_READ, worker)
            ready = selector.select(max(0.0, min(deadline for _, deadline in busy.values()) - now))
        for key, _ in ready:
            worker = key.data
            index, _deadline = busy[worker]
            alive = worker.feed()
            line = worker.take_line()
            if line is None and alive:
                continue
            del busy[worker]
            verdict = _parse(line, index) if line is not None else None
            if verdict is None:
                verdicts[index] = self._lost(worker, "checker error: the worker died or answered garbage "
                                                     "(a resource limit, or a checker that broke out)")
            else:
                verdicts[index] = verdict
                idle.append(worker)
        now = time.monotonic()
        for worker, (index, deadline) in list(busy.items()):
            if now >= deadline:
                del busy[worker]
                verdicts[index] = self._lost(worker, f"checker error: timed out after {self.limits.timeout:g} s")

    def _lost(self, worker: Worker, reason: str) -> Verdict:
        worker.kill()
        if worker in self.workers:
            self.workers.remove(worker)
        return Verdict(False, reason, True)


def _parse(line: str, index: int) -> Verdict | None:
    try:
        reply = json.loads(line)
    except ValueError:
        return None
    if not isinstance(reply, dict) or reply.get("id") != index:
        return None
    passed, reason, error = reply.get("passed"), reply.get("reason"), reply.get("checker_error")
    if not (isinstance(passed, bool) and isinstance(reason, str) and isinstance(error, bool)):
        return None
    return Verdict(passed and not error, reason, error)


def check_isolation(isolation: str) -> None:
    """At planning as at the first check: an unknown isolation, or ``bwrap`` without bubblewrap, is refused."""
    if isolation not in ISOLATIONS:
        raise ClueError(f"sandbox isolation must be one of {', '.join(ISOLATIONS)}, not {isolation!r}")
    if isolation == "bwrap" and bwrap_path() is None:
        raise ClueError("sandbox=bwrap asked, but bubblewrap (bwrap) is not installed: install it "
                        "(apt-get install bubblewrap) or use --set sandbox=process")


def planned_isolation(isolation: str) -> str:
    """The manifest's note: where this run's checkers are to run (``auto`` as this machine resolves it)."""
    fences = "seccomp, Landlock where the kernel has it, dropped privileges, an audit hook"
    if isolation == "process" or (isolation == "auto" and bwrap_path() is None):
        why = "sandbox=process" if isolation == "process" else "sandbox=auto, bubblewrap (bwrap) is not installed"
        return f"checker sandbox: plain processes ({why}) with {fences}"
    fallback = " (if bwrap fails to start: plain processes, and the run says so once)" if isolation == "auto" else ""
    return f"checker sandbox: bubblewrap (sandbox={isolation}) with {fences}{fallback}"


def run_checks(checks: Iterable[Check], limits: Limits = Limits()) -> tuple[list[Verdict], dict[str, str]]:
    """Every verdict and what held (``isolation``: ``bwrap`` or ``process``; ``privileges``, ``landlock``,
    ``seccomp``), workers closed after."""
    with Sandbox(limits) as box:
        verdicts = box.run(list(checks))
        return verdicts, dict(box.fences)
