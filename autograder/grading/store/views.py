"""Tables read from the store: ``grades.csv`` (one row per submission) and one row per question.

Every view is read from the gradebook, so it holds every submission the store holds (a regrade
of one student leaves everyone else's rows as they were), scores as ``nbgrader export`` gives
them (a manual score over the autograder's, minus the late penalty). Files are written
atomically: a reader sees the old file or the new one, never half of one.
"""

from __future__ import annotations

import csv
import os
import re
import tempfile
from pathlib import Path

from nbgrader.api import SubmittedAssignment

from ..names import csv_cell
from .gradebook import Store, _final

__all__ = [
    "CSV_COLUMNS",
    "QUESTION_COLUMNS",
    "grade_rows",
    "question_rows",
    "write_csv",
    "number",
    "duration",
    "late_words",
    "missing_submission",
]

CSV_COLUMNS = [
    "student_id",
    "assignment_id",
    "score",
    "max_score",
    "status",
    "failed",
    "late_penalty",
    "timestamp",
    "late",
]
QUESTION_COLUMNS = ["student_id", "assignment_id", "question", "score", "max_score", "status", "cause"]


def number(value: float | None) -> str:
    """A score as the CSV files write it: ``2``, ``1.5`` (``%g``), "" for None."""
    return "" if value is None else f"{float(value):g}"


def duration(seconds: float) -> str:
    """A duration in seconds as a person reads it: whole hours from 10 h (``36 h`` for 36 h 6 min),
    ``7.5 h`` under that, ``40 min`` under an hour (at least ``1 min``)."""
    hours = seconds / 3600
    if hours >= 10:
        return f"{hours:.0f} h"
    return f"{hours:.2g} h" if hours >= 1 else f"{max(seconds / 60, 1):.0f} min"


def late_words(seconds_late: float, penalty: float) -> str:
    """How a late submission is shown beside its score, wherever the score is shown (grade's table,
    ``grades.csv``'s ``late``, the exports, the report, the feedback page): ``-8 (late, 36 h)`` when
    the late-submission plugin took 8 points off, ``late (36 h, no penalty)`` when it took none
    (nbgrader's default policy, ``none``); "" for a submission on time (an extension included).
    ``seconds_late``: nbgrader's ``total_seconds_late``; ``penalty``: points."""
    if seconds_late <= 0:
        return ""
    if penalty > 0:
        return f"-{penalty:g} (late, {duration(seconds_late)})"
    return f"late ({duration(seconds_late)}, no penalty)"


def missing_submission(store: Store, assignment_id: str, student_id: str) -> str:
    """Why ``student_id``'s submission of ``assignment_id`` is not in ``store``, naming what is:
    ``no assignment ex09 in the gradebook (it has ex01_graph, ex02_leaves)`` or ``no submission of
    ex02_leaves by carol in the gradebook (handed in by ada, bob)``."""
    assignments = sorted(a.name for a in store.gb.assignments)
    if assignment_id not in assignments:
        return f"no assignment {assignment_id} in the gradebook (it has {', '.join(assignments) or 'none'})"
    by = sorted(s.student_id for s in store.gb.find_assignment(assignment_id).submissions)
    handed_in = ", ".join(by) or "nobody"
    return f"no submission of {assignment_id} by {student_id} in the gradebook (handed in by {handed_in})"


def _natural(name: str) -> list:
    """``q2_check`` before ``q10_check``."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


def _submissions(store: Store) -> list:
    subs = store.gb.db.query(SubmittedAssignment).all()
    return sorted(subs, key=lambda s: (s.student_id, s.assignment.name))


def _grades(submission) -> list:
    grades = [g for nb in submission.notebooks for g in nb.grades]
    return sorted(grades, key=lambda g: (g.notebook.notebook.name, _natural(g.name)))


def grade_rows(store: Store) -> list[dict]:
    """One ``grades.csv`` row (keys ``CSV_COLUMNS``) per submission in the store, sorted by
    student and assignment. ``status`` is the grader's ("" for a submission only plain nbgrader
    graded); ``failed``: the test cells scoring below their maximum; ``late``: :func:`late_words`."""
    statuses = store.statuses()
    rows = []
    for sub in _submissions(store):
        rows.append(
            dict(
                student_id=sub.student_id,
                assignment_id=sub.assignment.name,
                score=number(_final(sub)),
                max_score=number(sub.max_score),
                status=statuses.get(sub.id, ""),
                failed=" ".join(g.name for g in _grades(sub) if g.score < g.max_score),
                late_penalty=number(sub.late_submission_penalty or 0),
                timestamp=sub.timestamp.isoformat(sep=" ") if sub.timestamp else "",
                late=late_words(sub.total_seconds_late, float(sub.late_submission_penalty or 0)),
            )
        )
    return rows


def question_rows(store: Store) -> list[dict]:
    """One row (keys ``QUESTION_COLUMNS``) per graded test cell of every submission: its score
    (manual over auto) and maximum, the submission's status and the cell's cause key."""
    statuses, causes = store.statuses(), store.causes()
    rows = []
    for sub in _submissions(store):
        for nb in sub.notebooks:
            comments = {c.cell_id: c.id for c in nb.comments}
            for g in sorted(nb.grades, key=lambda g: _natural(g.name)):
                rows.append(
                    dict(
                        student_id=sub.student_id,
                        assignment_id=sub.assignment.name,
                        question=g.name,
                        score=number(g.score),
                        max_score=number(g.max_score),
                        status=statuses.get(sub.id, ""),
                        cause=causes.get(comments.get(g.cell_id), ""),
                    )
                )
    return rows


def write_csv(path: Path, columns: list[str], rows: list[dict], header_rows: list[list] = ()) -> Path:
    """Write ``rows`` (dicts) as CSV with ``columns``, every cell through ``names.csv_cell`` (no
    cell a spreadsheet reads as a formula), atomically (a temporary file renamed over ``path``).
    ``header_rows``: extra rows right after the header (Canvas's "Points Possible")."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", newline="", encoding="utf-8") as f:
            writer = csv.writer(f)
            writer.writerow([csv_cell(c) for c in columns])
            for extra in header_rows:
                writer.writerow([csv_cell(c) for c in extra])
            for row in rows:
                writer.writerow([csv_cell(row.get(c, "")) for c in columns])
        os.chmod(tmp, 0o644)  # mkstemp's 0600 would hide the grades from a course's other graders
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
