"""The service's durable queue: one SQLite file (``STATE/queue.db``) holding every submission it
received, what became of it, the extra attempts granted, and which attempt the gradebook holds.

A submission is a row from the moment it is received (its files already copied into the service's
own folder, ``inbound.take``) to the end: ``queued``, then ``done`` with its outcome (``graded``,
``over limit``, ``cooldown``, ``not counted``, ``refused``). The row is written in one transaction
(SQLite's journal makes it whole or absent, even under ``kill -9``) and its ``inbound`` name is
unique, so a submission seen again after a restart is never a second row; a row still ``queued``
after a restart is graded then. A :class:`Queue` is used by one thread at a time: the grading loop
and each request of the page open their own.

Fair order: the queued rows are taken by their rank among the same learner's queued rows (each
learner's first, then each learner's second, ...), then in the order received, so one learner's
fifty submissions wait behind everyone else's first one, and a burst at the deadline drains in order.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections import defaultdict
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Queue", "Attempt", "fair_order", "summary", "QUEUED", "DONE"]

QUEUED, DONE = "queued", "done"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS attempts (
    id TEXT PRIMARY KEY,            -- inbound.attempt_id(inbound): the folder's name hashed
    inbound TEXT UNIQUE NOT NULL,   -- the exchange folder's name, as it was (data: escaped where shown)
    student TEXT NOT NULL,          -- '' when the name holds no safe id
    assignment TEXT NOT NULL,
    seq INTEGER NOT NULL,           -- order received
    received_at REAL NOT NULL,      -- seconds since the epoch, the service's clock
    submitted_at REAL NOT NULL,     -- the time that counts (inbound.take): the kernel's ctime
    claimed TEXT NOT NULL,          -- what the learner's timestamp.txt said (not trusted)
    notebook TEXT NOT NULL,         -- the notebook file the learner handed in ('' none)
    state TEXT NOT NULL,
    outcome TEXT NOT NULL DEFAULT '',
    counted INTEGER NOT NULL DEFAULT 0,   -- 1: used one of the learner's attempts
    number INTEGER,                 -- which attempt (1, 2, ...) when counted
    score REAL, max_score REAL, late_penalty REAL,
    status TEXT NOT NULL DEFAULT '',
    reason TEXT NOT NULL DEFAULT '', -- why it was not graded or not counted, for the learner
    questions TEXT NOT NULL DEFAULT '[]',
    finished_at REAL,
    held_until REAL,                -- hidden tests' results held until then (the due date), or NULL
    owner INTEGER                   -- the inbound folder's owning uid: whose share a refused name costs
);
CREATE INDEX IF NOT EXISTS attempts_state ON attempts (state, seq);
CREATE INDEX IF NOT EXISTS attempts_seq ON attempts (seq);
CREATE INDEX IF NOT EXISTS attempts_learner ON attempts (student, assignment, seq);
CREATE TABLE IF NOT EXISTS grants (
    student TEXT NOT NULL, assignment TEXT NOT NULL, extra INTEGER NOT NULL,
    PRIMARY KEY (student, assignment)
);
CREATE TABLE IF NOT EXISTS standing (   -- the attempt whose grading the gradebook holds now
    student TEXT NOT NULL, assignment TEXT NOT NULL, attempt TEXT NOT NULL,
    PRIMARY KEY (student, assignment)
);
"""


@dataclass
class Attempt:
    """One submission's row (see the schema): times in seconds since the epoch; ``questions`` a
    list of ``{"grade_id", "score", "points", "cause", "message"}``."""

    id: str
    inbound: str
    student: str
    assignment: str
    seq: int
    received_at: float
    submitted_at: float
    claimed: str
    notebook: str
    state: str
    outcome: str = ""
    counted: int = 0
    number: int | None = None
    score: float | None = None
    max_score: float | None = None
    late_penalty: float | None = None
    status: str = ""
    reason: str = ""
    questions: list | str = "[]"
    finished_at: float | None = None
    held_until: float | None = None
    owner: int | None = None

    def __post_init__(self):
        if isinstance(self.questions, str):
            self.questions = json.loads(self.questions or "[]")


def fair_order(queued: list[Attempt]) -> list[Attempt]:
    """``queued`` in the order the service takes them: by rank among the same learner's (first
    submissions of everyone, then second ones, ...), then by the order received."""
    rank: dict[str, int] = defaultdict(int)
    keyed = []
    for attempt in sorted(queued, key=lambda a: a.seq):
        keyed.append((rank[attempt.student], attempt.seq, attempt))
        rank[attempt.student] += 1
    return [attempt for *_, attempt in sorted(keyed, key=lambda k: k[:2])]


class Queue:
    """The queue file at ``path`` (made when missing), for one thread."""

    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        # one thread at a time (the service is made in one thread and runs in another)
        self.db = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)
        self.db.row_factory = sqlite3.Row
        self.db.execute("PRAGMA journal_mode=WAL")  # the page reads while the loop writes
        self.db.execute("PRAGMA synchronous=NORMAL")  # whole after a process's kill -9 (not a power cut)
        columns = {row[1] for row in self.db.execute("PRAGMA table_info(attempts)")}
        if columns and "owner" not in columns:  # a queue written before owners were kept
            self.db.execute("ALTER TABLE attempts ADD COLUMN owner INTEGER")
        self.db.executescript(_SCHEMA)

    def close(self) -> None:
        self.db.close()

    @contextmanager
    def atomic(self):
        """One transaction for what is written inside (all of it, or none after a kill)."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield self
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    def _rows(self, sql: str, *args) -> list[Attempt]:
        return [Attempt(**dict(row)) for row in self.db.execute(sql, args)]

    # -- receipts ------------------------------------------------------------------------------

    def known(self) -> set[str]:
        """The inbound names received so far."""
        return {row[0] for row in self.db.execute("SELECT inbound FROM attempts")}

    def add(self, attempt_id: str, inbound: str, student: str, assignment: str, **fields) -> bool:
        """Record a submission received (``fields``: ``submitted_at``, ``claimed``, ``notebook``,
        and for one refused at once ``state``, ``outcome``, ``reason``). False when its inbound
        name is already recorded (nothing changes)."""
        now = time.time()
        values = {
            "id": attempt_id, "inbound": inbound, "student": student, "assignment": assignment, "received_at": now,
            "submitted_at": now, "claimed": "", "notebook": "", "state": QUEUED, **fields,
        }  # fmt: skip
        if values["state"] == DONE:
            values.setdefault("finished_at", now)
        columns = ", ".join(values)
        marks = ", ".join("?" for _ in values)
        cursor = self.db.execute(
            f"INSERT OR IGNORE INTO attempts (seq, {columns}) SELECT COALESCE(MAX(seq), 0) + 1, {marks} FROM attempts",
            tuple(values.values()),
        )
        return cursor.rowcount == 1

    def refused_by_owner(self) -> dict[int, int]:
        """How many names each owner (uid) had refused at once (not a submission): ``{uid: count}``."""
        rows = self.db.execute(
            "SELECT owner, COUNT(*) FROM attempts WHERE outcome = 'refused' AND owner IS NOT NULL GROUP BY owner"
        )
        return {int(row[0]): int(row[1]) for row in rows}

    # -- the work ------------------------------------------------------------------------------

    def queued(self) -> list[Attempt]:
        """Every queued submission, in fair order (:func:`fair_order`)."""
        return fair_order(self._rows("SELECT * FROM attempts WHERE state = ? ORDER BY seq", QUEUED))

    def finish(self, attempt_id: str, **fields) -> None:
        """Mark a submission done with ``fields`` (``outcome``, ``counted``, ``number``, ``score``,
        ``max_score``, ``late_penalty``, ``status``, ``reason``, ``questions`` as a list)."""
        if "questions" in fields:
            fields["questions"] = json.dumps(fields["questions"])
        fields = {**fields, "state": DONE, "finished_at": time.time()}
        assignments = ", ".join(f"{name} = ?" for name in fields)
        self.db.execute(f"UPDATE attempts SET {assignments} WHERE id = ?", (*fields.values(), attempt_id))

    def held(self) -> list[Attempt]:
        """The attempts whose hidden tests' results are held, in the order received."""
        return self._rows("SELECT * FROM attempts WHERE held_until IS NOT NULL ORDER BY seq")

    def release_held(self, attempt_id: str) -> None:
        self.db.execute("UPDATE attempts SET held_until = NULL WHERE id = ?", (attempt_id,))

    def get(self, attempt_id: str) -> Attempt | None:
        rows = self._rows("SELECT * FROM attempts WHERE id = ?", attempt_id)
        return rows[0] if rows else None

    def of(self, student: str | None = None) -> list[Attempt]:
        """Every submission (of ``student`` alone when given), in the order received."""
        if student is None:
            return self._rows("SELECT * FROM attempts ORDER BY seq")
        return self._rows("SELECT * FROM attempts WHERE student = ? ORDER BY seq", student)

    def used(self, student: str, assignment: str) -> list[Attempt]:
        """The attempts of one learner's assignment that counted, in the order received."""
        return self._rows(
            "SELECT * FROM attempts WHERE student = ? AND assignment = ? AND state = ? AND counted = 1 ORDER BY seq",
            student, assignment, DONE,
        )  # fmt: skip

    # -- grants and standing -------------------------------------------------------------------

    def grant(self, student: str, assignment: str, extra: int) -> None:
        """Give ``student`` ``extra`` attempts more than the limit of ``assignment`` (0 removes them)."""
        self.db.execute(
            "INSERT INTO grants VALUES (?, ?, ?) "
            "ON CONFLICT (student, assignment) DO UPDATE SET extra = excluded.extra",
            (student, assignment, extra),
        )

    def extra(self, student: str, assignment: str) -> int:
        row = self.db.execute("SELECT extra FROM grants WHERE student = ? AND assignment = ?", (student, assignment))
        found = row.fetchone()
        return int(found[0]) if found else 0

    def extras(self) -> dict[tuple[str, str], int]:
        """Every grant: ``{(student, assignment): extra attempts}``."""
        return {(row[0], row[1]): int(row[2]) for row in self.db.execute("SELECT * FROM grants")}

    def standing(self, student: str, assignment: str) -> str | None:
        row = self.db.execute(
            "SELECT attempt FROM standing WHERE student = ? AND assignment = ?", (student, assignment)
        ).fetchone()
        return row[0] if row else None

    def stand(self, student: str, assignment: str, attempt_id: str) -> None:
        """Record that the gradebook now holds ``attempt_id``'s grading for this learner's assignment."""
        self.db.execute(
            "INSERT INTO standing VALUES (?, ?, ?) "
            "ON CONFLICT (student, assignment) DO UPDATE SET attempt = excluded.attempt",
            (student, assignment, attempt_id),
        )

    def pairs(self) -> list[tuple[str, str]]:
        """Every (student, assignment) with an attempt that counted."""
        return [
            (row[0], row[1])
            for row in self.db.execute("SELECT DISTINCT student, assignment FROM attempts WHERE counted = 1")
        ]


MESSAGE = 300  # characters of a failed question's message kept for the learner's page


def summary(result) -> dict:
    """What the queue keeps of a graded ``Result``: score, status and each question's outcome."""
    return dict(
        score=result.score,
        max_score=result.max_score,
        late_penalty=result.late_penalty,
        status=result.status,
        questions=[
            dict(
                grade_id=q.grade_id,
                score=q.score,
                points=q.points,
                cause=q.cause,
                message=(result.failure(q).splitlines() or [""])[0][:MESSAGE],
            )
            for q in result.questions
        ],
    )
