"""The sandboxes of a run: one per grading thread, started early and closed together."""

from __future__ import annotations

import threading

from ..sandbox.container import Sandbox, SandboxError
from ..sandbox.limits import Limits

__all__ = ["Sandboxes"]


class Sandboxes:
    """One sandbox per grading thread, taken on first use from those :meth:`launch` started (else
    a new one); all closed by :meth:`close`. ``extras``: what their fork servers also import
    (``sandbox.extras_for``)."""

    def __init__(self, limits: Limits, sandboxed: bool, extras: tuple[str, ...] = ()):
        self.limits, self.sandboxed, self.extras = limits, sandboxed, extras
        self._local, self._all, self._lock = threading.local(), [], threading.Lock()
        self._launched: list[Sandbox] = []

    def launch(self, count: int) -> None:
        """Start ``count`` sandboxes now, without waiting: their fork servers import torch at once,
        while the grader opens its gradebook."""
        for _ in range(count):
            sandbox = Sandbox(self.limits, self.sandboxed, self.extras)
            with self._lock:
                self._all.append(sandbox)
                self._launched.append(sandbox)
            sandbox.launch()

    def get(self) -> Sandbox:
        if getattr(self._local, "sandbox", None) is None:
            with self._lock:
                sandbox = self._launched.pop(0) if self._launched else None
                if sandbox is None:
                    sandbox = Sandbox(self.limits, self.sandboxed, self.extras)
                    self._all.append(sandbox)
            self._local.sandbox = sandbox
        return self._local.sandbox

    def ready(self) -> None:
        """Wait until this thread's sandbox has started (one that does not is its first
        notebook's to find: ``runner`` replaces it, or grades it ``sandbox lost``)."""
        try:
            self.get().ready()
        except SandboxError:
            pass

    def close(self) -> None:
        for sandbox in self._all:
            sandbox.close()
