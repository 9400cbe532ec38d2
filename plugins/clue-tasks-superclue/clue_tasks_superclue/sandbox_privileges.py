"""The checker child gives up root: an unprivileged uid and gid, no groups, no capabilities.

Root reads any ``/proc/<pid>/environ``, clue-core's with its API keys among them, and root is
what CI runs as. So a child that starts with capabilities drops them all before any checker
code runs: the bounding set emptied (no later exec could win them back, and exec is refused
anyway), the secure bits locked so that uid 0 never means capabilities again (both best effort:
they need CAP_SETPCAP, and matter only across an exec), then
``setgroups([])``, ``setresgid`` and ``setresuid`` to the sandbox user (65534, ``nobody``,
unless configured), which clears the permitted and effective sets. It is checked afterwards
with ``capget``: a child that still holds a capability does not run the check. A child that
starts without capabilities (an ordinary user, or bubblewrap's user namespace with every
capability dropped) has nothing to drop.
"""

from __future__ import annotations

import ctypes
import os

_PR_CAPBSET_DROP, _PR_SET_SECUREBITS, _PR_CAP_AMBIENT, _AMBIENT_CLEAR_ALL = 24, 28, 47, 4
#: NOROOT, NOROOT_LOCKED, KEEP_CAPS_LOCKED (off), NO_CAP_AMBIENT_RAISE and its lock.
_SECUREBITS = (1 << 0) | (1 << 1) | (1 << 5) | (1 << 6) | (1 << 7)
_CAP_VERSION_3 = 0x20080522


class _Header(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _Data(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def capabilities(libc: ctypes.CDLL) -> int:
    """The effective, permitted and inheritable sets of this process OR-ed together (0: none)."""
    header, data = _Header(_CAP_VERSION_3, 0), (_Data * 2)()
    if libc.capget(ctypes.byref(header), data) != 0:
        raise OSError(ctypes.get_errno(), "capget failed")
    return sum((d.effective | d.permitted | d.inheritable) << (32 * i) for i, d in enumerate(data))


def drop(uid: int, libc: ctypes.CDLL | None = None) -> str:
    """Give up every privilege for good; what held (``uid N, no capabilities``). Raises OSError if one stays.

    ``uid`` -1 keeps uid 0 and drops only the capabilities: for a Python installation that the
    unprivileged uid cannot read (pyenv under ``/root``). Such a child still reads no
    ``/proc/<pid>/environ`` of clue-core, which is not dumpable while the pool lives
    (:mod:`clue_tasks_superclue.sandbox_host`): a process without ``CAP_SYS_PTRACE`` may not.
    """
    libc = libc or ctypes.CDLL(None, use_errno=True)
    if capabilities(libc) == 0:
        return f"uid {os.getuid()}, no capabilities"
    # the bounding set, the ambient set and the secure bits matter only across an exec (which seccomp kills):
    # best effort where CAP_SETPCAP is missing; what must hold, no capability and no uid 0, is checked below
    libc.prctl(_PR_CAP_AMBIENT, _AMBIENT_CLEAR_ALL, 0, 0, 0)
    libc.prctl(_PR_SET_SECUREBITS, _SECUREBITS, 0, 0, 0)
    cap = 0
    while libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) == 0:  # EINVAL past the kernel's last capability
        cap += 1
    os.setgroups([])
    if uid >= 0:
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)  # clears the permitted and effective sets (KEEP_CAPS is off and locked)
    else:
        header, empty = _Header(_CAP_VERSION_3, 0), (_Data * 2)()
        if libc.capset(ctypes.byref(header), empty) != 0:
            raise OSError(ctypes.get_errno(), "capset failed")
    left = capabilities(libc)
    if left or (uid >= 0 and (0 in os.getresuid() or 0 in os.getresgid())):
        raise OSError(f"privileges still held after the drop (capabilities {left:#x}, uids {os.getresuid()})")
    return f"uid {os.getuid()}, no capabilities"
