"""Does a grading container go into cgroups that bound it (as root, where the machine allows),
does the grader know beforehand whether it can, and is nothing left behind?"""

import os

import pytest

from autograder.grading.sandbox.cgroups import memory_cgroup_available
from autograder.grading.sandbox.container import Sandbox
from autograder.grading.sandbox.limits import Limits
from autograder.grading.sandbox.runner import run_cells


def test_a_closed_sandbox_leaves_no_cgroup_behind(sandbox_available):
    """Grading as root puts each container in a pids and a memory cgroup: are they gone once the
    sandbox closes?"""
    box = Sandbox(Limits())
    box.start()
    groups = list(box._cgroups)
    box.close()
    assert groups if os.getuid() == 0 else not groups
    assert not [g for g in groups if g.exists()]


HOGS = """
import os, signal, time
children = []
for _ in range(4):                       # each child stays under RLIMIT_AS; together they do not
    pid = os.fork()
    if pid == 0:
        block = bytearray(400 * 2**20)   # touched: really held
        time.sleep(2)
        os._exit(0)
    children.append(pid)
ends = [os.waitpid(pid, 0)[1] for pid in children]
print("killed:", sum(os.WIFSIGNALED(e) and os.WTERMSIG(e) == signal.SIGKILL for e in ends))
"""


@pytest.mark.skipif(
    not memory_cgroup_available(),
    reason="this machine lets the grader make no memory cgroup (root and a writable controller needed)",
)
def test_a_submissions_processes_together_stay_within_the_containers_memory(sandbox_available):
    """RLIMIT_AS bounds each process alone: do four forks of 400 MiB each, together over the
    container's memory bound, never hold more than it (the kernel kills some), and does the next
    submission in that container run as usual?"""
    cap = 2**30 + 512 * 2**20
    limits = Limits(memory=2**30, container_memory=cap)
    with Sandbox(limits) as small:
        (group,) = [g for g in small._cgroups if "memory" in g.name]
        run_cells([HOGS], small, limits)
        small.reap()
        peak = next(
            (group / n).read_text() for n in ("memory.max_usage_in_bytes", "memory.peak") if (group / n).exists()
        )
        after = run_cells(["print('next student')"], small, limits)
    assert int(peak) <= cap
    assert after.cells[0].outputs[0]["text"] == "next student\n"


def test_a_sandbox_makes_a_memory_cgroup_exactly_where_one_is_said_to_be_available(sandbox_available):
    """Does memory_cgroup_available() (what `grade` tells the instructor) agree with what a
    sandbox really gets on this machine?"""
    with Sandbox(Limits()) as box:
        made = [g for g in box._cgroups if "memory" in g.name]
    assert bool(made) == memory_cgroup_available()
