"""Progress of a class run, in its two phases: the solutions' runs, then the notebooks.

The solutions run first (once per assignment; their records are the references), on a bar of
their own, so a run that is still running solutions does not show "0/177" with a guess. The
grading bar's estimate is the notebooks left, shared among the grading threads, times the
mean time one notebook took in a thread (its sandbox already started), per assignment (seeded
with its solution's run, :class:`GradingBar`): sensible from the first notebook on, where an
average over the run's elapsed time (tqdm's) would count the sandboxes' start as if every
notebook cost it. The mean, not the median: a class's few slow notebooks (a loop stopped at the
time limit, a cell that runs for seconds) are a large part of what is left, which the median of
mostly quick notebooks leaves out (a demo class's estimate was 4x short).
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
    """The second phase's bar, for ``total`` notebooks graded by ``workers`` threads.

    ``kinds``: how many of the notebooks are of each kind (their assignment), when a class mixes
    assignments whose notebooks take very different times (``torch.compile`` and DDP take seconds,
    the first chapters a tenth of one): each kind is then estimated from its own notebooks so far,
    else from ``seeds`` (seconds: its solution's run), else from all notebooks so far. A class
    ordered by assignment would otherwise be estimated from its quick first assignments only."""

    def __init__(
        self,
        total: int,
        workers: int,
        enabled: bool,
        kinds: dict[str, int] | None = None,
        seeds: dict[str, float] | None = None,
    ):
        self.total, self.workers, self.done = total, max(1, workers), 0
        self._left = dict(kinds) if kinds else {None: total}
        self._seeds = dict(seeds or {})
        self._took: dict[str | None, list[float]] = {}
        self._lock = threading.Lock()
        self.bar = tqdm(
            total=total,
            desc="grading",
            unit="notebook",
            disable=not enabled,
            bar_format="{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} [{elapsed}{postfix}]",
        )

    def timed(self, grade: Callable, before: Callable | None = None, kind: Callable | None = None) -> Callable:
        """``grade`` that records how long each call took (after ``before``, which starts the
        thread's sandbox the first time: not a notebook's cost), as a notebook of the kind that
        ``kind`` gives for the call's arguments (default: the one kind)."""

        def run(*args):
            if before is not None:
                before()
            start = time.monotonic()
            try:
                return grade(*args)
            finally:
                with self._lock:
                    self._took.setdefault(kind(*args) if kind else None, []).append(time.monotonic() - start)

        return run

    def estimate(self) -> float | None:
        """Seconds left: the notebooks left of each kind times that kind's mean notebook time
        (see the class docstring), shared among ``workers`` threads; None while nothing is known."""
        with self._lock:
            every = [t for took in self._took.values() for t in took]
            means = {k: statistics.fmean(t) for k, t in self._took.items() if t}
            fallback = statistics.fmean(every) if every else None
            work = 0.0
            for kind, left in self._left.items():
                mean = means.get(kind, self._seeds.get(kind, fallback))
                if left and mean is None:
                    return None
                work += left * (mean or 0.0)
        return work / self.workers

    def advance(self, kind: str | None = None) -> None:
        """One more notebook graded (of ``kind``, when the bar has kinds)."""
        self.done += 1
        key = kind if kind in self._left else next(iter(self._left))
        self._left[key] = max(0, self._left[key] - 1)
        left = self.estimate()
        first = left is not None and not getattr(self.bar, "postfix", None)
        if left is not None and self.done < self.total:
            self.bar.set_postfix_str(about(left), refresh=False)
        elif self.done >= self.total:
            self.bar.set_postfix_str("", refresh=False)
        self.bar.update(1)
        if first and self.done < self.total:  # shown at once, not at tqdm's next refresh: a small class may end first
            self.bar.refresh()

    def close(self) -> None:
        self.bar.close()
