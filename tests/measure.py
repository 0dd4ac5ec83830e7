"""What tests measure about the processes they start: CPU seconds, which a busy machine does not inflate
(a bound on wall seconds fails when other jobs share the cores; one on CPU seconds fails only when the
code itself does more work)."""

from __future__ import annotations

import resource


def children_cpu_seconds() -> float:
    """CPU seconds (user and system) of this process's children that have ended and been waited for,
    their own waited-for children included (``getrusage(RUSAGE_CHILDREN)``). Take it before and after
    a ``subprocess.run``: the difference is what that command and everything it started used."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime
