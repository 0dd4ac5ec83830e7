"""The cgroups a grading container goes into when grading as root: ``pids`` (the kernel's bound on
processes; RLIMIT_NPROC does not bind root) and ``memory`` (one bound on all of a container's
processes together; RLIMIT_AS bounds each one alone). cgroup v1 and v2; each is left out where
the machine gives this process no controller to write to (a container manager, a read-only
hierarchy), and :func:`memory_cgroup_available` says so beforehand, for the instructor.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from .limits import Limits

__all__ = ["container_cgroups", "remove_cgroup", "memory_cgroup_available"]

_MEMORY_LIMIT = "memory.limit_in_bytes|memory.max"  # cgroup v1 | v2: a memory cgroup's bound, in bytes


def _cgroup_parents(controller: str) -> list[Path]:
    """Where a new cgroup of ``controller`` may go, best first: inside this process's own cgroup
    (so that the limits of whatever runs the grader still hold, and where a container manager
    delegates only that one), then the hierarchy's root; cgroup v1 (``/sys/fs/cgroup/<controller>``)
    before v2 (``/sys/fs/cgroup``). Read from ``/proc/self/cgroup``: ``id:controllers:path``."""
    own = {}
    try:
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            for name in controllers.split(",") if controllers else ["v2"]:
                own[name] = path.lstrip("/")
    except (OSError, ValueError):
        pass
    parents = []
    for root, key in ((Path(f"/sys/fs/cgroup/{controller}"), controller), (Path("/sys/fs/cgroup"), "v2")):
        if own.get(key):
            parents.append(root / own[key])
        parents.append(root)
    return parents


def _new_cgroup(controller: str, settings: dict[str, int]) -> Path | None:
    """A new cgroup of ``controller`` ("pids", "memory") with ``settings`` written into it (the
    first file of each pair of alternatives that exists: cgroup v1 or v2), or None where this
    process may not make one."""
    for base in _cgroup_parents(controller):
        if (base / "cgroup.procs").exists() and os.access(base, os.W_OK):
            group = base / f"autograder-{controller}-{os.getpid()}-{id(object())}"
            try:
                group.mkdir()
                for names, value in settings.items():
                    written = [name for name in names.split("|") if (group / name).exists()]
                    if not written:
                        raise OSError(f"no {names} in {group}")
                    (group / written[0]).write_text(str(value))
                return group
            except OSError:
                try:
                    group.rmdir()
                except OSError:
                    pass
    return None


def container_cgroups(limits: Limits) -> list[Path]:
    """As root, the cgroups a container goes into: ``pids`` (RLIMIT_NPROC does not bind root;
    threads count) and, with a memory limit, ``memory`` for all its processes together (RLIMIT_AS
    bounds each process alone: a submission's forks, or memory it left in shared segments, would
    add up). Each is left out where the machine has no such controller to write to."""
    groups = [_new_cgroup("pids", {"pids.max": limits.processes + 8})]
    if limits.container_memory is not None:
        total = limits.container_memory
        # the limit, then (v1) memory+swap or (v2) no swap: no swapping past it, where swap is accounted
        groups.append(_new_cgroup("memory", {_MEMORY_LIMIT: total}))
        if groups[-1] is not None:
            for name, value in (("memory.memsw.limit_in_bytes", total), ("memory.swap.max", 0)):
                try:
                    (groups[-1] / name).write_text(str(value))
                except OSError:
                    pass
    return [g for g in groups if g is not None]


def memory_cgroup_available() -> bool:
    """Whether grading here can bound all processes of a container together: true only as root on
    a machine whose cgroup ``memory`` controller (v1 or v2) this process may write to. Where it is
    false, ``Limits.memory`` (RLIMIT_AS) bounds each process of a submission alone. Never raises."""
    if os.getuid() != 0:
        return False
    group = _new_cgroup("memory", {_MEMORY_LIMIT: 2**30})  # the file a real container's bound is written to
    if group is None:
        return False
    remove_cgroup(group)
    return True


def remove_cgroup(group: Path, seconds: float = 5.0) -> None:
    """Kill what is left in ``group`` and remove it: a cgroup can be removed only once its last
    process is gone, which takes a moment after SIGKILL. Never raises."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            pids = (group / "cgroup.procs").read_text().split()
        except OSError:
            return
        for pid in pids:
            try:
                os.kill(int(pid), signal.SIGKILL)
            except (ProcessLookupError, ValueError):
                pass
        try:
            group.rmdir()
            return
        except OSError:
            time.sleep(0.02)
