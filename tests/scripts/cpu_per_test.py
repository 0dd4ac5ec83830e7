"""A pytest plugin that logs each test's wall and CPU seconds, for ``where_the_time_goes.py``.

    COURSE_CPU_LOG=/tmp/times.jsonl ./course test -p tests.scripts.cpu_per_test

One JSON line per test (every xdist worker appends to the same file): ``nodeid``, ``wall`` (seconds
from set-up to teardown), ``cpu`` (CPU seconds of the worker and of the child processes it reaped in
that time: kernels, sandboxes, servers), ``worker``.
"""

from __future__ import annotations

import json
import os
import resource
import time

import pytest

from tests.measure import children_cpu_seconds


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    return own.ru_utime + own.ru_stime + children_cpu_seconds()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    path = os.environ.get("COURSE_CPU_LOG")
    wall, cpu = time.monotonic(), _cpu()
    yield
    if path:
        line = {
            "nodeid": item.nodeid,
            "wall": round(time.monotonic() - wall, 3),
            "cpu": round(_cpu() - cpu, 3),
            "worker": os.environ.get("PYTEST_XDIST_WORKER", "main"),
        }
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps(line) + "\n")
