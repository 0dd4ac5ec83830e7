"""The limits a submission runs under: one object, from the command line down, unchanged."""

from __future__ import annotations

from dataclasses import asdict, dataclass

__all__ = ["Limits"]


@dataclass(frozen=True)
class Limits:
    """Limits of one submission's grading.

    Attributes:
        cell_timeout: seconds one cell may run.
        total_timeout: seconds the whole notebook may run (re-runs after a runaway cell included).
        memory: bytes of address space a submission may map on top of what the warm process
            already maps (None: no limit).
        processes: processes a submission may have at once, its own included (RLIMIT_NPROC; see
            ``sandbox/container.py`` for how it is enforced when grading as root).
        open_files: descriptors a submission may hold open (RLIMIT_NOFILE).
        file_size: bytes of the largest file a submission may write (RLIMIT_FSIZE).
        tmp_size: bytes of the sandbox's private temporary folder (a tmpfs; sandbox only).
        container_memory: bytes of memory every process of a sandbox may hold together, the warm
            fork server's included (a memory cgroup, when grading as root; None: no such bound).
            By default ``memory`` plus 2 GiB (the warm server holds about 0.5 GiB, and its
            /tmp counts too), so a submission's forks cannot each take ``memory``.
    """

    cell_timeout: float = 60.0
    total_timeout: float = 300.0
    memory: int | None = 2 * 1024**3
    processes: int = 64
    open_files: int = 256
    file_size: int = 64 * 1024**2
    tmp_size: int = 256 * 1024**2
    container_memory: int | None = -1  # -1: memory + 2 GiB, see __post_init__

    def __post_init__(self):
        if self.container_memory == -1:
            default = None if self.memory is None else self.memory + 2 * 1024**3
            object.__setattr__(self, "container_memory", default)

    def for_process(self, tmp: str | None = None) -> dict:
        """The limits a submission process applies to itself (JSON-safe), with its temporary
        folder's parent (None: the sandbox's own /tmp)."""
        return dict(asdict(self), tmp=tmp)
