"""The checker child's seccomp filter: the kernel fence that holds whatever Python-level trick a checker finds.

Loaded by the sandbox worker (standard library only, bound read-only into bubblewrap next to
``sandbox_worker.py``). The audit hook sees the *path text* of an ``open`` or ``os.remove``
event but not its ``dir_fd``: a checker that opened a directory and walked ``../`` from it
reached ``/etc/passwd`` while the hook saw a path inside its work dir. So the filter, on its own:

* kills the process (``SECCOMP_RET_KILL_PROCESS``: nothing to catch, no reply to forge; the
  worker sees SIGSYS) for process creation, ``execve``, sockets, ``kill``, ``ptrace``, device
  nodes (``mknod``, ``mknodat``), ``fchdir`` (an outside directory fd made the cwd),
  ``chroot``, mounts and the new mount API, namespaces, file handles, other processes' memory
  and fds, io_uring (whose opens seccomp never sees), bpf, perf, userfaultfd and keyrings;
* kills every path call whose directory fd is not ``AT_FDCWD`` (``openat``, ``mkdirat``,
  ``unlinkat``, ``renameat``/``renameat2`` on both sides, ``linkat``, ``symlinkat``,
  ``fchmodat``, ``fchownat``, ``faccessat``, ``readlinkat``, ``utimensat``), so every path a
  checker names is resolved from its work dir as the cwd, as the hook resolved it; the stat
  calls (``newfstatat``, ``statx``) stay allowed, since glibc's ``fstat`` is
  ``newfstatat(fd, "", AT_EMPTY_PATH)``: they tell at most that a file exists;
* answers ``openat2`` with ENOSYS (glibc falls back to ``openat``, which the rules above see).

The kernel passes a directory fd as an ``int``: the filter compares the low 32 bits of the
argument with ``AT_FDCWD`` (-100), exactly what the kernel will use, whatever the high word says.
"""

from __future__ import annotations

import ctypes
import platform
import sys

AT_FDCWD_LOW = 0xFFFFFF9C
KILL, ENOSYS, ALLOW = 0x80000000, 0x00050000 | 38, 0x7FFF0000
_LD_ABS, _JEQ, _JGE, _RET = 0x20, 0x15, 0x35, 0x06
_NR, _ARCH = 0, 4


def _arg_low(index: int) -> int:
    """Offset of the low word of syscall argument ``index`` in ``struct seccomp_data`` (little-endian)."""
    return 16 + 8 * index


#: Per machine: audit arch, syscalls killed outright, syscalls killed unless each named argument is
#: AT_FDCWD, syscalls answered ENOSYS.
TABLES: dict[str, tuple[int, tuple[int, ...], dict[int, tuple[int, ...]], tuple[int, ...]]] = {
    "x86_64": (
        0xC000003E,
        (57, 58, 56, 435, 59, 322, 41, 62, 101,  # fork vfork clone clone3 execve execveat socket kill ptrace
         133, 259, 81, 161, 155, 165, 166, 272, 308,  # mknod(at) fchdir chroot pivot_root (u)mount unshare setns
         428, 429, 430, 431, 432, 433, 442, 467,  # open_tree move_mount fsopen fsconfig fsmount fspick mount_setattr
         303, 304, 310, 311, 434, 438, 424,  # file handles, process_vm_*, pidfd_*
         425, 426, 427, 321, 298, 323, 312, 248, 249, 250,  # io_uring_* bpf perf_event_open userfaultfd kcmp keys
         463, 464, 465, 466, 468, 469),  # *xattrat, file_getattr/file_setattr (directory fds of their own)
        {257: (0,), 258: (0,), 263: (0,), 264: (0, 2), 316: (0, 2), 265: (0, 2), 266: (1,), 268: (0,), 452: (0,),
         260: (0,), 269: (0,), 439: (0,), 267: (0,), 280: (0,), 261: (0,)},
        (437,),  # openat2
    ),
    "aarch64": (
        0xC00000B7,
        (220, 435, 221, 281, 198, 129, 117,  # clone clone3 execve execveat socket kill ptrace
         33, 50, 51, 41, 40, 39, 97, 268,  # mknodat fchdir chroot pivot_root mount umount2 unshare setns
         428, 429, 430, 431, 432, 433, 442, 467,
         264, 265, 270, 271, 434, 438, 424,
         425, 426, 427, 280, 241, 282, 272, 217, 218, 219,
         463, 464, 465, 466, 468, 469),
        {56: (0,), 34: (0,), 35: (0,), 38: (0, 2), 276: (0, 2), 37: (0, 2), 36: (1,), 53: (0,), 452: (0,),
         54: (0,), 48: (0,), 439: (0,), 78: (0,), 88: (0,)},
        (437,),
    ),
}


def program(machine: str) -> list[tuple[int, int, int, int]]:
    """The BPF program for ``machine`` as (code, jt, jf, k) tuples; every branch ends in a return."""
    arch, killed, fd_checked, nosys = TABLES[machine]
    ops = [(_LD_ABS, 0, 0, _ARCH), (_JEQ, 1, 0, arch), (_RET, 0, 0, KILL), (_LD_ABS, 0, 0, _NR)]
    if machine == "x86_64":  # the x32 ABI's numbers (0x40000000 | nr) are refused whole
        ops += [(_JGE, 0, 1, 0x40000000), (_RET, 0, 0, KILL)]
    for number in killed:
        ops += [(_JEQ, 0, 1, number), (_RET, 0, 0, KILL)]
    for number in nosys:
        ops += [(_JEQ, 0, 1, number), (_RET, 0, 0, ENOSYS)]
    for number, args in fd_checked.items():
        block: list[tuple[int, int, int, int]] = []
        for index in args:  # each argument: AT_FDCWD goes on to the next, anything else is killed
            block += [(_LD_ABS, 0, 0, _arg_low(index)), (_JEQ, 1, 0, AT_FDCWD_LOW), (_RET, 0, 0, KILL)]
        block.append((_RET, 0, 0, ALLOW))
        ops += [(_JEQ, 0, len(block), number), *block]  # not this call: skip the block, nr still loaded
    ops.append((_RET, 0, 0, ALLOW))
    return ops


def install(libc: ctypes.CDLL | None = None) -> str | None:
    """Set no_new_privs and load the filter for good; None, or why it could not be (then nothing holds)."""
    machine = platform.machine()
    if machine not in TABLES or not sys.platform.startswith("linux"):
        return f"no seccomp filter for {machine}/{sys.platform}"
    ops = program(machine)

    class Filter(ctypes.Structure):
        _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint)]

    class Program(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(Filter))]

    filters = (Filter * len(ops))(*[Filter(*op) for op in ops])
    fprog = Program(len(ops), filters)
    libc = libc or ctypes.CDLL(None, use_errno=True)
    if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
        return f"prctl(PR_SET_NO_NEW_PRIVS) failed: errno {ctypes.get_errno()}"
    if libc.prctl(22, 2, ctypes.byref(fprog), 0, 0) != 0:  # PR_SET_SECCOMP, SECCOMP_MODE_FILTER
        return f"prctl(PR_SET_SECCOMP) failed: errno {ctypes.get_errno()}"
    return None
