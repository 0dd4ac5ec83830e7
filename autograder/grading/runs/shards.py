"""Shards: a class split into N deterministic, balanced slices, one per machine of a job array.

A submission (student, assignment) belongs to shard ``sha256(student NUL assignment) mod N``: the
same on every machine and in every run (no shared state, no file listing order), unchanged for
every earlier submission when students or assignments are added, and balanced as a uniform hash
is (for S submissions, each shard holds S/N ± a few sqrt(S/N); ``tests/grading/runs/test_shards.py``
measures it). ``grade --shard K/N`` grades shard K; the N shards together grade each submission
exactly once.

Where the results go: into the gradebook itself when it is a server database (PostgreSQL), which
every shard writes at once; otherwise (SQLite, one file that only one writer may hold) into a
part gradebook of the shard's own, ``OUT/parts/shard-K-of-N.db``, which ``merge`` combines. A part
starts with the course gradebook's due dates and extensions (:func:`deadlines`), so its late
penalties are the ones a whole-class run computes, and ``merge`` finds them agreeing.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["parse_shard", "shard_of", "in_shard", "is_server", "part_url", "one_writer_at_a_time", "deadlines"]

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


def is_server(db_url: str) -> bool:
    """True for a server database (any backend but SQLite), which several shards may write at once."""
    from sqlalchemy.engine import make_url

    return make_url(db_url).get_backend_name() != "sqlite"


def part_url(db_url: str, out: Path, shard: tuple[int, int] | None) -> str:
    """The gradebook a run records into: ``db_url`` itself for a whole class or a server
    database; for a shard of a SQLite gradebook, its part ``OUT/parts/shard-K-of-N.db``."""
    if shard is None or is_server(db_url):
        return db_url
    return f"sqlite:///{Path(out).resolve() / 'parts' / f'shard-{shard[0]}-of-{shard[1]}.db'}"


# pg_advisory_lock's key for "a grader is creating or updating the gradebook's tables and structure"
_STRUCTURE_LOCK = int.from_bytes(hashlib.sha256(b"autograder gradebook structure").digest()[:4], "big")


@contextmanager
def one_writer_at_a_time(db_url: str, shard: tuple[int, int] | None) -> Iterator[None]:
    """While the body runs, no other shard on the same PostgreSQL gradebook runs its own: shards
    starting at once would each create nbgrader's tables and each assignment's cells (a session
    lock, ``pg_advisory_lock``, on a connection of its own). Does nothing for a whole class or a
    database that is not PostgreSQL."""
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    if shard is None or make_url(db_url).get_backend_name() != "postgresql":
        yield
        return
    engine = create_engine(db_url)
    try:
        with engine.connect() as connection:
            connection.execute(text("SELECT pg_advisory_lock(:key)"), {"key": _STRUCTURE_LOCK})
            connection.commit()
            try:
                yield
            finally:
                connection.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": _STRUCTURE_LOCK})
                connection.commit()
    finally:
        engine.dispose()


def deadlines(db_url: str) -> tuple[dict, dict]:
    """``({assignment: due date}, {(student, assignment): extension})`` held by the gradebook at
    ``db_url`` (naive UTC ``datetime`` and ``timedelta``, as nbgrader stores them); both empty when
    it is a SQLite file that does not exist yet (read only: nothing is created)."""
    from ..store.gradebook import sqlite_path

    path = sqlite_path(db_url)
    if path is not None and (not path.is_file() or path.stat().st_size == 0):
        return {}, {}
    from nbgrader.api import Gradebook

    with Gradebook(db_url) as gb:
        dues = {a.name: a.duedate for a in gb.assignments if a.duedate is not None}
        extensions = {
            (sub.student_id, a.name): sub.extension for a in gb.assignments for sub in a.submissions if sub.extension
        }
    return dues, extensions
