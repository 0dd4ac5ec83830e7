"""What a submission could leave behind outside files and processes, and how the fork server clears it.

Inside the grading sandbox every submission of a container shares one IPC namespace (bubblewrap's
``--unshare-ipc``) and one user: System V shared memory, message queues and semaphore sets outlive
the process that made them (a shared-memory segment also holds memory that no process's address
space, so no RLIMIT_AS, counts), and keys added to the user's keyrings stay there. Any of them would
let a submission leave something for the next one graded in the same container. So:

- a submission process joins a new session keyring of its own (:func:`own_session_keyring`) and may
  not create POSIX message queues (``RLIMIT_MSGQUEUE`` 0, set with the other limits);
- after each notebook the fork server removes every System V object of the namespace
  (:func:`remove_system_v_objects`) and clears the user keyrings (:func:`clear_user_keyrings`).

Only inside the sandbox: outside it the namespace and the keyrings are the machine's. Linux only;
every call here ignores what it cannot do (a kernel without keyrings, another architecture).
"""

from __future__ import annotations

import ctypes
import os

__all__ = ["remove_system_v_objects", "own_session_keyring", "clear_user_keyrings"]

_IPC_RMID = 0
# keyctl(2): the syscall's number per architecture, its operations and special keyring ids.
_KEYCTL_SYSCALL = {"x86_64": 250, "aarch64": 219}.get(os.uname().machine)
_KEYCTL_JOIN_SESSION_KEYRING, _KEYCTL_CLEAR = 1, 7
_KEY_SPEC_USER_KEYRING, _KEY_SPEC_USER_SESSION_KEYRING = -4, -5


def _libc():
    return ctypes.CDLL(None, use_errno=True)


def _ids(table: str) -> list[int]:
    """The ids (second column) of ``/proc/sysvipc/<table>``: the objects of this IPC namespace."""
    try:
        with open(f"/proc/sysvipc/{table}") as f:
            rows = f.read().splitlines()[1:]
    except OSError:
        return []
    return [int(row.split()[1]) for row in rows if len(row.split()) > 1]


def remove_system_v_objects() -> int:
    """Remove every System V shared-memory segment, message queue and semaphore set this process
    may remove (a segment goes once its last process has detached). Returns how many were removed."""
    libc, removed = _libc(), 0
    for table, remove in (
        ("shm", lambda i: libc.shmctl(i, _IPC_RMID, None)),
        ("msg", lambda i: libc.msgctl(i, _IPC_RMID, None)),
        ("sem", lambda i: libc.semctl(i, 0, _IPC_RMID)),
    ):
        removed += sum(remove(i) == 0 for i in _ids(table))
    return removed


def _keyctl(operation: int, *args: int) -> int:
    if _KEYCTL_SYSCALL is None:
        return -1
    return _libc().syscall(_KEYCTL_SYSCALL, operation, *(ctypes.c_long(a) for a in args))


def own_session_keyring() -> None:
    """Join a new, anonymous session keyring: keys the submission adds there die with it."""
    _keyctl(_KEYCTL_JOIN_SESSION_KEYRING, 0)


def clear_user_keyrings() -> None:
    """Unlink every key from the user keyring and the user-session keyring (shared by every
    process of this user)."""
    for keyring in (_KEY_SPEC_USER_KEYRING, _KEY_SPEC_USER_SESSION_KEYRING):
        _keyctl(_KEYCTL_CLEAR, keyring)
