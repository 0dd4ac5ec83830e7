"""Attempt rules applied: may this submission be graded, which graded attempt counts, how many are left.

Only attempts that were graded count (``counted``): one refused, over the limit, in a cooldown, or
that the grader itself could not grade (``crashed (grader error ...)``: the grader's fault, never
the learner's) uses none. The decision is taken when the submission's turn comes, after every
earlier submission of the same learner's assignment was decided (the queue keeps each learner's
order), so it never depends on how fast the grader was.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from .queue import Attempt
from .settings import Policy

__all__ = ["Decision", "decide", "counting", "left", "GRADER_ERROR"]

GRADER_ERROR = "crashed (grader error"  # status.grader_error's start: the grader's fault


@dataclass(frozen=True)
class Decision:
    """``grade``: whether to grade it; ``outcome`` and ``reason`` (for the learner) when not;
    ``number``: which attempt it is when graded (1, 2, ...)."""

    grade: bool
    number: int = 0
    outcome: str = ""
    reason: str = ""


def _when(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def decide(policy: Policy, extra: int, used: list[Attempt], submitted_at: float) -> Decision:
    """The decision on a submission made at ``submitted_at`` (seconds since the epoch), given the
    attempts of the same learner's assignment that counted so far (``used``, in order) and the
    ``extra`` attempts granted to this learner."""
    allowed = None if policy.limit is None else policy.limit + extra
    if allowed is not None and len(used) >= allowed:
        return Decision(
            False,
            outcome="over limit",
            reason=f"not graded: all {allowed} attempts used (this submission is kept; your instructor can grant more)",
        )
    if policy.cooldown and used:
        ready = used[-1].submitted_at + policy.cooldown
        if submitted_at < ready:
            return Decision(
                False,
                outcome="cooldown",
                reason="not graded: too soon after your last graded attempt; "
                f"the next one may come from {_when(ready)}",
            )
    return Decision(True, number=len(used) + 1)


def final_score(attempt: Attempt) -> float:
    """An attempt's score after its late penalty (as the gradebook exports it)."""
    return float(attempt.score or 0) - float(attempt.late_penalty or 0)


def counting(policy: Policy, used: list[Attempt]) -> Attempt | None:
    """Which of the attempts that counted the gradebook should hold: the latest, or the best (the
    highest score after its late penalty; of equal ones, the later). None when none counted."""
    if not used:
        return None
    if policy.counts == "best":
        return max(reversed(used), key=final_score)  # max keeps the first of equals: the later one
    return used[-1]


def left(policy: Policy, extra: int, used: int) -> int | None:
    """Attempts left (None: unlimited)."""
    return None if policy.limit is None else max(policy.limit + extra - used, 0)
