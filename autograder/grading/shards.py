"""Shards: a class split into N deterministic, balanced slices, one per machine of a job array.

A submission (student, assignment) belongs to shard ``sha256(student NUL assignment) mod N``: the
same on every machine and in every run (no shared state, no file listing order), unchanged for
every earlier submission when students or assignments are added, and balanced as a uniform hash
is (for S submissions, each shard holds S/N ± a few sqrt(S/N); ``tests/grading/test_shards.py``
measures it). ``grade --shard K/N`` grades shard K; the N shards together grade each submission
exactly once.
"""

from __future__ import annotations

import hashlib
import re

__all__ = ["parse_shard", "shard_of", "in_shard"]

_SHARD = re.compile(r"(\d+)/(\d+)")


def parse_shard(text: str) -> tuple[int, int]:
    """``"K/N"`` as ``(K, N)``, with 0 <= K < N (``$SLURM_ARRAY_TASK_ID/N`` of ``--array=0-(N-1)``,
    ``$JOB_COMPLETION_INDEX/N`` of a Kubernetes Indexed Job).

    Raises:
        ValueError: not of that form (the message says what is expected).
    """
    found = _SHARD.fullmatch(text.strip())
    if not found or not 0 <= int(found.group(1)) < int(found.group(2)):
        raise ValueError(f"--shard {text!r}: expected K/N with 0 <= K < N, such as 0/4 (the first of 4)")
    return int(found.group(1)), int(found.group(2))


def shard_of(student_id: str, assignment_id: str, shards: int) -> int:
    """The shard (0 .. ``shards`` - 1) that grades this student's submission of this assignment."""
    digest = hashlib.sha256(f"{student_id}\0{assignment_id}".encode("utf-8", "surrogateescape")).digest()
    return int.from_bytes(digest[:8], "big") % shards


def in_shard(student_id: str, assignment_id: str, shard: tuple[int, int] | None) -> bool:
    """True when ``shard`` (``(K, N)``; None: the whole class) grades this submission."""
    return shard is None or shard_of(student_id, assignment_id, shard[1]) == shard[0]
