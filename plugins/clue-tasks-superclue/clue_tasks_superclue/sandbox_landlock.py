"""The checker child's Landlock domain: the second kernel fence, on what a path may reach.

Where seccomp (:mod:`sandbox_seccomp`) stops the ways around the cwd, Landlock decides what the
resolved file may be, whichever way a checker got there: read only beneath the read roots (the
Python installation, the system libraries, three devices) and the check's own work dir, write,
create and remove only beneath the work dir. ``/proc`` is beneath no root, so no
``/proc/<pid>/environ`` is readable; device nodes cannot be made anywhere. Where the ABI has
them, TCP bind and connect are refused too (ABI 4) and signals and abstract Unix sockets are
scoped to the domain (ABI 6).

Standard library only (ctypes syscalls 444-446, the same on x86-64 and aarch64). A kernel
without Landlock (ENOSYS, or EOPNOTSUPP where it is built but off) is not an error: the domain is
recorded as absent and seccomp and the audit hook still hold.
"""

from __future__ import annotations

import ctypes
import os

_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446
_VERSION = 1  # LANDLOCK_CREATE_RULESET_VERSION
_PATH_BENEATH = 1
EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR, MAKE_REG = 1 << 4, 1 << 5, 1 << 6, 1 << 7, 1 << 8
MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK, MAKE_SYM, REFER, TRUNCATE, IOCTL_DEV = (1 << n for n in range(9, 16))
#: Every filesystem right each ABI version knows (v1: 13 rights, v2 REFER, v3 TRUNCATE, v5 IOCTL_DEV).
_FS_BY_ABI = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 4: (1 << 15) - 1}
_FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV
READ = READ_FILE | READ_DIR
WORK = READ | WRITE_FILE | REMOVE_DIR | REMOVE_FILE | MAKE_DIR | MAKE_REG | MAKE_SYM | REFER | TRUNCATE


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("fs", ctypes.c_uint64), ("net", ctypes.c_uint64), ("scoped", ctypes.c_uint64)]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def abi(libc: ctypes.CDLL) -> int:
    """The kernel's Landlock ABI version; 0 where it has none (or has it switched off)."""
    version = libc.syscall(_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_VERSION))
    return max(0, int(version))


def restrict(read_roots: list[str], work_dir: str, libc: ctypes.CDLL | None = None) -> str:
    """Enter the domain for good (no_new_privs must be set); ``landlock ABI n``, or why absent.

    Raises OSError when the kernel has Landlock but a step fails: a fence that should hold and
    does not is not something to go on without.
    """
    libc = libc or ctypes.CDLL(None, use_errno=True)
    version = abi(libc)
    if version <= 0:
        return f"absent (errno {ctypes.get_errno()})"
    handled = _FS_BY_ABI.get(version, (1 << 16) - 1)
    attr = _RulesetAttr(handled, 0, 0)
    size = 8
    if version >= 4:
        attr.net, size = 0b11, 16  # LANDLOCK_ACCESS_NET_BIND_TCP | CONNECT_TCP: no rule allows either
    if version >= 6:
        attr.scoped, size = 0b11, 24  # LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | SIGNAL
    ruleset = libc.syscall(_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    if ruleset < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset failed")
    try:
        for path, rights in [*((p, READ) for p in read_roots), (work_dir, WORK)]:
            _add(libc, ruleset, path, rights & handled)
        if libc.syscall(_RESTRICT_SELF, ruleset, ctypes.c_uint32(0)) != 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self failed")
    finally:
        os.close(ruleset)
    return f"landlock ABI {version}"


def _add(libc: ctypes.CDLL, ruleset: int, path: str, rights: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return  # a root that is not there grants nothing
    try:
        if not os.path.isdir(path):
            rights &= _FILE_RIGHTS  # a file's rule may hold only a file's rights
            if path == os.devnull:
                rights |= WRITE_FILE
        rule = _PathBeneath(rights, fd)
        if libc.syscall(_ADD_RULE, ruleset, _PATH_BENEATH, ctypes.byref(rule), ctypes.c_uint32(0)) != 0:
            raise OSError(ctypes.get_errno(), f"landlock_add_rule {path} failed")
    finally:
        os.close(fd)
