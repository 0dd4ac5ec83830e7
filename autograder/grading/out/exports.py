"""Grades out of the store, in the shapes other tools import.

- ``questions.csv``: one row per student, assignment and test cell (score, max, status, cause);
- ``summary.csv``: one row per student, one column per assignment (its score after any late
  penalty, blank where nothing was submitted) and the total;
- ``canvas.csv``: Canvas's gradebook import (Grades > Import): the columns ``Student, ID, SIS
  User ID, SIS Login ID, Section``, then one column per assignment, and a ``Points Possible`` row
  under the header, as Canvas's own export writes them. Canvas matches a row to a learner by
  ``ID``, ``SIS User ID`` or ``SIS Login ID``; given Canvas's own gradebook export as a roster,
  those come from it (matched on the student id as any of the three) and an assignment's column
  keeps Canvas's header ``name (id)``, so the import updates that assignment instead of creating
  a new one. Without a roster, ``SIS Login ID`` is the student id.

Every cell goes through ``names.csv_cell``: no cell starts a formula in a spreadsheet.
"""

from __future__ import annotations

import csv
import itertools
import re
from pathlib import Path

from ..store.gradebook import Store, _final
from ..store.views import QUESTION_COLUMNS, late_words, number, question_rows, write_csv

__all__ = [
    "CANVAS_ID_COLUMNS",
    "export_all",
    "summary_table",
    "canvas_table",
    "read_canvas_roster",
    "not_in_roster",
    "ambiguous_in_roster",
]

CANVAS_ID_COLUMNS = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
_MATCH = ("SIS Login ID", "SIS User ID", "ID")
_MAX_ROWS = 100_000  # rows of a Canvas roster read (a class, not a census)


def _scores(store: Store) -> tuple[list[str], dict[str, float], dict[str, dict[str, float]], dict]:
    """Assignment ids (nbgrader's order: due date, name), their maxima, each student's final
    score per assignment, and nbgrader's ``Student`` rows by id."""
    gb = store.gb
    assignments = [a.name for a in gb.assignments]
    maxima = {a.name: float(a.max_score) for a in gb.assignments}
    students = {s.id: s for s in gb.students}
    scores: dict[str, dict[str, float]] = {s: {} for s in students}
    for a in gb.assignments:
        for sub in a.submissions:
            scores.setdefault(sub.student_id, {})[a.name] = _final(sub)
    return assignments, maxima, scores, students


def _name(student) -> str:
    """nbgrader's ``Student`` as formgrader and Canvas show a name: ``Last, First`` ("" if none)."""
    return ", ".join(p for p in (student and student.last_name, student and student.first_name) if p)


def summary_table(store: Store) -> tuple[list[str], list[dict]]:
    """``(columns, rows)`` of ``summary.csv``: ``student_id``, ``name`` (the gradebook's, ``Last,
    First``), each assignment, ``total``."""
    assignments, _, scores, students = _scores(store)
    late = _late(store)
    rows = []
    for student in sorted(scores):
        row = {"student_id": student, "name": _name(students.get(student))}
        row.update({a: number(scores[student].get(a)) for a in assignments})
        row["total"] = number(sum(scores[student].values()))
        row["late"] = "; ".join(f"{a} {words}" for a, words in late.get(student, []))
        rows.append(row)
    return ["student_id", "name", *assignments, "total", "late"], rows


def _late(store: Store) -> dict[str, list[tuple[str, str]]]:
    """``{student: [(assignment, views.late_words)]}`` of the late submissions, in assignment order."""
    late: dict[str, list[tuple[str, str]]] = {}
    for a in store.gb.assignments:
        for sub in a.submissions:
            words = late_words(sub.total_seconds_late, float(sub.late_submission_penalty or 0))
            if words:
                late.setdefault(sub.student_id, []).append((a.name, words))
    return late


def read_canvas_roster(path: Path) -> tuple[dict[str, dict | list[dict]], dict[str, str]]:
    """From Canvas's gradebook export CSV: ``({any of ID/SIS User ID/SIS Login ID: its row},
    {assignment id: Canvas's column header})`` (an assignment column ``ex01_graph (1234)``). An id
    that rows of different people give (one's login is another's Canvas ID, a row twice with other
    names) maps to the list of those rows: it matches no one, and :func:`ambiguous_in_roster` says so.

    Raises:
        ValueError: the file has no ``Student`` and ``SIS Login ID`` columns.
    """
    try:
        with open(path, newline="", encoding="utf-8-sig") as f:
            rows = list(itertools.islice(csv.DictReader(f), _MAX_ROWS))
    except csv.Error as error:  # a field past csv's limit, a stray quote: not a roster this export can read
        raise ValueError(f"{path}: not a CSV export can read ({error})") from None
    if not rows or not {"Student", "SIS Login ID"} <= rows[0].keys():
        raise ValueError(f"{path}: not a Canvas gradebook export (no Student and SIS Login ID columns)")
    headers = {}
    for column in rows[0]:
        found = re.fullmatch(r"(.+?) \((\d+)\)", column or "")
        if found:
            headers[found.group(1)] = column
    people: dict[str, dict | list[dict]] = {}  # a list: the rows that give one id to different people
    for row in rows:
        if (row.get("Student") or "").strip() in ("Points Possible", "Student, Test"):  # Canvas's own extra rows
            continue
        for key in _MATCH:
            value = (row.get(key) or "").strip()
            known = people.get(value, row)
            if not value:
                continue
            if isinstance(known, list) or _who(known) != _who(row):  # one id, two people: neither is taken
                people[value] = [*(known if isinstance(known, list) else [known]), row]
            else:
                people[value] = row
    return people, headers


def _who(row: dict) -> str:
    return " / ".join(f"{k} {(row.get(k) or '').strip()!r}" for k in ("Student", *_MATCH) if (row.get(k) or "").strip())


def ambiguous_in_roster(store: Store, roster: Path) -> list[str]:
    """One line per graded student whose id the roster gives to different people (each named):
    their ``canvas.csv`` row carries no Canvas id (nothing is guessed)."""
    people, _ = read_canvas_roster(roster)
    found = []
    for student in sorted(_scores(store)[2]):
        rows = people.get(student)
        if isinstance(rows, list):
            found.append(f"{student} matches different people in {roster.name}: {' and '.join(map(_who, rows))}")
    return found


def canvas_table(store: Store, roster: Path | None = None) -> tuple[list[str], list[list], list[dict]]:
    """``(columns, [points possible row], rows)`` of ``canvas.csv`` (see the module docstring)."""
    assignments, maxima, scores, students = _scores(store)
    people, headers = read_canvas_roster(roster) if roster else ({}, {})
    titles = [headers.get(a, a) for a in assignments]
    columns = [*CANVAS_ID_COLUMNS, *titles]
    points = ["Points Possible", "", "", "", "", *(number(maxima[a]) for a in assignments)]
    rows = []
    for student in sorted(scores):
        known = people.get(student)
        if isinstance(known, dict):  # one row: a list means one id of several people, matched to none
            row = {c: known.get(c, "") for c in CANVAS_ID_COLUMNS}
        else:
            name = _name(students.get(student)) or student
            row = {"Student": name, "ID": "", "SIS User ID": "", "SIS Login ID": student, "Section": ""}
        row.update({t: number(scores[student].get(a)) for a, t in zip(assignments, titles)})
        rows.append(row)
    return columns, [points], rows


def not_in_roster(store: Store, roster: Path) -> list[str]:
    """The graded students that Canvas's gradebook export ``roster`` does not name (by ``ID``,
    ``SIS User ID`` or ``SIS Login ID``): their ``canvas.csv`` rows carry no Canvas id, and Canvas's
    import will not match them.

    Raises:
        ValueError: ``roster`` is not a Canvas gradebook export.
    """
    people, _ = read_canvas_roster(roster)
    return sorted(student for student in _scores(store)[2] if student not in people)  # ambiguous ones: said apart


def export_all(store: Store, out: Path, roster: Path | None = None) -> list[Path]:
    """Write ``questions.csv``, ``summary.csv`` and ``canvas.csv`` into ``out`` (atomically each).

    Returns:
        The paths written.

    Raises:
        ValueError: ``roster`` is not a Canvas gradebook export.
    """
    canvas_columns, points, canvas_rows = canvas_table(store, roster)  # a bad roster stops before any file
    summary_columns, summary_rows = summary_table(store)
    return [
        write_csv(out / "questions.csv", QUESTION_COLUMNS, question_rows(store)),
        write_csv(out / "summary.csv", summary_columns, summary_rows),
        write_csv(out / "canvas.csv", canvas_columns, canvas_rows, header_rows=points),
    ]
