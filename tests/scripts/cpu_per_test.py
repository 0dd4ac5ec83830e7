"""A pytest plugin that logs each test's wall and CPU seconds, for ``where_the_time_goes.py``.

    COURSE_CPU_LOG=/tmp/times.jsonl ./course test -p tests.scripts.cpu_per_test

One JSON line per test (every xdist worker appends to the same file): ``nodeid``, ``wall`` (seconds
from set-up to teardown), ``cpu`` (CPU seconds of the worker and of the child processes it reaped in
that time: kernels, sandboxes, servers), ``tree`` (CPU seconds of every process the worker
started, whenever it ended and whoever reaped it: a browser, a server or a kernel kept alive across tests
is counted in the test during which it spent them; from a cgroup of the worker's own where cgroup v1's
cpuacct can be written, as root on Linux, else from the live process tree under the worker, which loses
processes reparented away from it, such as Chromium's renderers), ``worker``.
"""

from __future__ import annotations

import atexit
import json
import os
import resource
import time

import pytest

from tests.measure import children_cpu_seconds

CPUACCT = "/sys/fs/cgroup/cpuacct"


def _own_cgroup() -> str | None:
    """A cpuacct cgroup holding this process (and so everything it starts from now on), or None."""
    group = os.path.join(CPUACCT, f"course-tests-{os.getpid()}")
    try:
        os.makedirs(group, exist_ok=True)
        with open(os.path.join(group, "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))
    except OSError:
        return None
    atexit.register(_leave, group)
    return group


def _leave(group: str) -> None:
    """Back to the parent cgroup, and the worker's removed (it stays while a process it started lives)."""
    try:
        with open(os.path.join(CPUACCT, "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))
        os.rmdir(group)
    except OSError:
        pass


_GROUP = _own_cgroup() if os.environ.get("COURSE_CPU_LOG") else None


def _tree_cpu() -> float:
    if _GROUP:
        with open(os.path.join(_GROUP, "cpuacct.usage")) as f:
            return int(f.read()) / 1e9
    return _live_tree_cpu()


def _live_tree_cpu() -> float:
    """CPU seconds of this process and all its descendants, alive (their own time and their reaped
    children's) or ended and waited for within the tree, from /proc (Linux); 0.0 elsewhere."""
    parent_of, ticks = {}, {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue  # ended while we read
        pid = int(entry.name)
        parent_of[pid] = int(fields[1])
        ticks[pid] = sum(int(x) for x in fields[11:15])  # utime, stime, cutime, cstime
    children: dict[int, list[int]] = {}
    for pid, parent in parent_of.items():
        children.setdefault(parent, []).append(pid)
    total, todo = 0, [os.getpid()]
    while todo:
        pid = todo.pop()
        total += ticks.get(pid, 0)
        todo.extend(children.get(pid, ()))
    return total / os.sysconf("SC_CLK_TCK")


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    return own.ru_utime + own.ru_stime + children_cpu_seconds()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    path = os.environ.get("COURSE_CPU_LOG")
    wall, cpu, tree = time.monotonic(), _cpu(), _tree_cpu()
    yield
    if path:
        line = {
            "nodeid": item.nodeid,
            "wall": round(time.monotonic() - wall, 3),
            "cpu": round(_cpu() - cpu, 3),
            "tree": round(_tree_cpu() - tree, 3),
            "worker": os.environ.get("PYTEST_XDIST_WORKER", "main"),
        }
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps(line) + "\n")
