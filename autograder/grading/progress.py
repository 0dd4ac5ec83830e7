"""Progress of a class run, in its two phases: the solutions' runs, then the notebooks.

The solutions run first (once per assignment; their records are the references), on a bar of
their own, so a run that is still running solutions does not show "0/177" with a guess. The
grading bar's estimate is the notebooks left, shared among the grading threads, times the
mean time one notebook took in a thread (its sandbox already started): sensible from the first
notebook on, where an average over the run's elapsed time (tqdm's) would count the sandboxes'
start as if every notebook cost it. The mean, not the median: a class's few slow notebooks (a
loop stopped at the time limit, a cell that runs for seconds) are a large part of what is left,
which the median of mostly quick notebooks leaves out (a demo class's estimate was 4x short).
"""

from __future__ import annotations

import math
import statistics
import threading
import time
from collections.abc import Callable

from tqdm import tqdm

__all__ = ["solutions_bar", "GradingBar", "about"]


def solutions_bar(total: int, enabled: bool, saved: bool) -> tqdm:
    """The first phase's bar: ``total`` solution runs (or references loaded from a file)."""
    return tqdm(
        total=total,
        desc="references (saved)" if saved else "solutions",
        unit="assignment",
        disable=not enabled,
        bar_format="{desc}: {n_fmt}/{total_fmt} assignments [{elapsed}]",
    )


def about(seconds: float) -> str:
    """``"about 40 s left"``, ``"about 3 min left"``, ``"about 1 h 5 min left"``."""
    if seconds < 60:
        return f"about {max(1, round(seconds))} s left"
    minutes = math.ceil(seconds / 60)
    return f"about {minutes} min left" if minutes < 60 else f"about {minutes // 60} h {minutes % 60} min left"


class GradingBar:
    """The second phase's bar, for ``total`` notebooks graded by ``workers`` threads."""

    def __init__(self, total: int, workers: int, enabled: bool):
        self.total, self.workers, self.done = total, max(1, workers), 0
        self._took: list[float] = []
        self._lock = threading.Lock()
        self.bar = tqdm(
            total=total,
            desc="grading",
            unit="notebook",
            disable=not enabled,
            bar_format="{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} [{elapsed}{postfix}]",
        )

    def timed(self, grade: Callable, before: Callable | None = None) -> Callable:
        """``grade`` that records how long each call took (after ``before``, which starts the
        thread's sandbox the first time: not a notebook's cost)."""

        def run(*args):
            if before is not None:
                before()
            start = time.monotonic()
            try:
                return grade(*args)
            finally:
                with self._lock:
                    self._took.append(time.monotonic() - start)

        return run

    def estimate(self) -> float | None:
        """Seconds left: the notebooks left, in rounds of ``workers``, times the mean notebook
        time so far (None before the first)."""
        with self._lock:
            if not self._took:
                return None
            mean = statistics.fmean(self._took)
        return math.ceil((self.total - self.done) / self.workers) * mean

    def advance(self) -> None:
        """One more notebook graded."""
        self.done += 1
        left = self.estimate()
        if left is not None and self.done < self.total:
            self.bar.set_postfix_str(about(left), refresh=False)
        elif self.done >= self.total:
            self.bar.set_postfix_str("", refresh=False)
        self.bar.update(1)

    def close(self) -> None:
        self.bar.close()
