"""Grade a class: every ``SUBMITTED/<student_id>/<assignment_id>/<notebook>.ipynb`` in parallel.

Each graded submission is recorded in nbgrader's gradebook (``store``) as soon as it is graded,
in one transaction with those graded while the last ones were written (at most ``_BATCH``), so a
run killed halfway keeps every submission recorded before, and its rerun grades the rest; then
``OUT/grades.csv`` is written from the store (every submission it holds, not only this run's)
with the feedback pages ``OUT/feedback/<student_id>/<assignment_id>.html``. Submissions are only
read. First each assignment's solution runs once (its records are the references); then ``jobs``
grading threads each keep one sandbox (a warm fork server in a bubblewrap container) and grade
one submission at a time in a fresh process of it. A sandbox that stops answering is replaced;
every process a submission started is gone before the next one starts, and all of them before
this function returns, so nothing can change ``grades.csv`` afterwards.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat

from .. import status
from ..names import UnsafeId, check_id
from ..sandbox.container import extras_for, sandbox_problem
from ..sandbox.limits import Limits
from ..store import default_db_url
from ..store.config import course_config
from ..store.gradebook import Store
from ..store.views import CSV_COLUMNS, grade_rows, write_csv
from .selection import selected
from .shards import deadlines, one_writer_at_a_time, part_url
from .warm import SandboxUnavailable, WarmGrader, write_feedback

__all__ = [
    "Submission",
    "SandboxUnavailable",
    "find_submissions",
    "submission_in",
    "load_sources",
    "grade_class",
    "default_db_url",
    "write_feedback",
    "CSV_COLUMNS",
]


@dataclass(frozen=True)
class Submission:
    """Where one student's notebook for one assignment is (``path`` None: none found);
    ``linked``: the notebook or a folder above it is a symbolic link, so it is not read (it could
    point at the solutions or at a classmate's notebook)."""

    student_id: str
    assignment_id: str
    path: Path | None
    linked: bool = False


def load_sources(solutions: Path) -> dict[str, tuple[str, nbformat.NotebookNode]]:
    """``{assignment_id: (notebook file name, source notebook)}`` for each ``solutions/<id>/``."""
    sources = {}
    for folder in sorted(p for p in solutions.iterdir() if p.is_dir()):
        notebooks = sorted(folder.glob("*.ipynb"))
        if notebooks:
            sources[folder.name] = (notebooks[0].name, nbformat.read(notebooks[0], as_version=4))
    return sources


def find_submissions(submitted: Path, sources: dict) -> list[Submission]:
    """Every ``<student>/<assignment>/`` folder under ``submitted``. The notebook is the one named
    as in the source, else the only ``.ipynb`` there (a learner who renamed it is still graded)."""
    found = []
    for student in sorted(p for p in submitted.iterdir() if p.is_dir() and _safe(p.name, "student id")):
        for assignment in sorted(p for p in student.iterdir() if p.is_dir() and _safe(p.name, "assignment id")):
            found.append(submission_in(submitted, student.name, assignment.name, sources))
    return found


def submission_in(submitted: Path, student_id: str, assignment_id: str, sources: dict) -> Submission:
    """The submission in ``submitted/<student_id>/<assignment_id>/`` (ids already checked): its
    notebook is the one named as in the source, else the only ``.ipynb`` there."""
    student, assignment = submitted / student_id, submitted / student_id / assignment_id
    expected = assignment / sources.get(assignment_id, ("?",))[0]
    notebooks = _notebooks(assignment)
    path = expected if expected.is_file() else (notebooks[0] if len(notebooks) == 1 else None)
    linked = any(p.is_symlink() for p in (student, assignment, path) if p is not None)
    return Submission(student_id, assignment_id, None if linked else path, linked)


def _notebooks(folder: Path) -> list[Path]:
    """The notebooks in ``folder``: its entries ending in ``.ipynb``, in any case (``.IPYNB``)."""
    return sorted(p for p in folder.iterdir() if p.suffix.lower() == ".ipynb")


def _safe(name: str, what: str) -> bool:
    """True for a safe id (``names.check_id``); else says on stderr, escaped, that it is skipped."""
    try:
        return bool(check_id(name, what))
    except UnsafeId as error:
        print(f"skipped: {error}", file=sys.stderr)
        return False


def _unknown(submission: Submission) -> dict:
    """The ``grades.csv`` row of a submission of an assignment the sources do not hold (no store)."""
    return dict(
        student_id=submission.student_id,
        assignment_id=submission.assignment_id,
        score="0",
        max_score="0",
        status=status.UNKNOWN_ASSIGNMENT,
        failed="",
        late_penalty="0",
        timestamp="",
        late="",
    )


def grade_class(
    submitted: Path,
    out: Path,
    solutions: Path,
    jobs: int | None = None,
    progress: bool = True,
    limits: Limits = Limits(),
    sandboxed: bool = True,
    db_url: str | None = None,
    course: Path | None = None,
    students: list[str] | None = None,
    assignments: list[str] | None = None,
    duedates: dict[str, str] | None = None,
    changes: dict | None = None,
    notes: list[str] | None = None,
    references=None,
    shard: tuple[int, int] | None = None,
) -> list[dict]:
    """Grade the submissions under ``submitted`` with ``jobs`` grading threads (default: the
    number of CPU cores), each with its own sandbox; record each in the store as it finishes;
    then write ``out/grades.csv`` from the store, and the feedback pages.

    Args:
        sandboxed: False (``--no-sandbox``) runs submissions without bubblewrap, for notebooks
            the instructor trusts; every status then says ``(no sandbox)``.
        db_url: the gradebook (nbgrader's ``db_url``); default ``default_db_url(out)``.
        course: an nbgrader course folder: its ``nbgrader_config.py`` is read (late-submission
            plugin, stubs) and the graded notebooks and feedback pages are also written in its
            ``autograded/`` and ``feedback/`` (for formgrader and ``release_feedback``).
        students, assignments: grade only these (None: all); every other result in the store stays.
        duedates: ``{assignment_id: due date}`` (any text ``nbgrader.utils.parse_utc`` reads)
            written into the gradebook before grading; otherwise the gradebook's due dates apply.
        changes: when given, filled with ``{(student_id, assignment_id): (old score or None, new)}``.
        notes: when given, gets a line per problem met that did not stop grading (a timestamp
            that could not be read, say).
        references: a ``saved_references.SavedReferences`` (``--references refs.json``): the
            solutions' records are loaded from it instead of running the solutions.
        shard: ``(K, N)`` (``--shard K/N``): only the submissions of shard K of N (``shards``),
            recorded into ``db_url`` when it is a server database, else into the part gradebook
            ``shards.part_url`` names; no ``grades.csv`` (``merge`` writes it when all are done).

    Returns:
        This run's rows (dicts with the keys of ``CSV_COLUMNS``, as in ``grades.csv``), sorted by
        student and assignment.

    Raises:
        FileNotFoundError: ``submitted`` or ``solutions`` is not a folder.
        selection.NothingToGrade: no submission of ``students`` and ``assignments`` (nothing written).
        StaleReferences: ``references`` were not saved from these solutions (nothing is written).
        SandboxUnavailable: ``sandboxed`` and bubblewrap cannot run here, or the sandbox does not
            start (the message says why, with bwrap's own words, and how to fix it).
        store.gradebook.StoreBusy: another run is writing to the same SQLite gradebook.
    """
    for folder in (submitted, solutions):
        if not folder.is_dir():
            raise FileNotFoundError(f"not a folder: {folder}")
    sources = load_sources(solutions)
    submissions = selected(find_submissions(submitted, sources), submitted, students, assignments, shard)
    if sandboxed and (problem := sandbox_problem()):
        raise SandboxUnavailable(problem)
    if references is not None:  # saved references: refuse stale ones before anything is written
        references.check({s.assignment_id for s in submissions if s.assignment_id in sources})
    notes = notes if notes is not None else []
    for submission in submissions:  # a renamed notebook is graded (find_submissions): say which file it was
        expected = sources.get(submission.assignment_id, ("",))[0]
        name = f"{submission.student_id}/{submission.assignment_id}"
        if submission.path is not None and expected and submission.path.name != expected:
            notes.append(f"{name}: graded {submission.path.name} (expected {expected})")
        elif submission.path is None and expected and not submission.linked:
            if len(found := _notebooks(submitted / submission.student_id / submission.assignment_id)) > 1:
                listed = ", ".join(p.name for p in found)
                notes.append(f"{name}: no notebook graded: {len(found)} notebooks ({listed}), none named {expected}")
    changes = changes if changes is not None else {}
    out.mkdir(parents=True, exist_ok=True)
    url = part_url(db_url or default_db_url(out), out, shard)
    todo = [s for s in submissions if s.assignment_id in sources]
    graded = sorted({s.assignment_id for s in todo})
    # the sandboxes start now (torch imports for seconds), while this process opens the gradebook
    extras = extras_for(cell.source for a in graded for cell in sources[a][1].cells)
    with WarmGrader(sources, jobs, limits, sandboxed, extras, references, progress) as grader:
        grader.launch(len(todo))
        with one_writer_at_a_time(url, shard):  # shards sharing a server gradebook make its tables in turn
            store = Store(url, course_config(course))
            try:
                for assignment in graded:
                    store.prepare(assignment, sources[assignment][0], sources[assignment][1])
                if url != (main := db_url or default_db_url(out)):  # a shard's part: the course's deadlines
                    dues, store.extensions = deadlines(main)
                    for assignment in graded:
                        if assignment in dues:
                            store.set_duedate(assignment, dues[assignment])
                for assignment, due in (duedates or {}).items():
                    store.set_duedate(assignment, due)
            except BaseException:
                store.close()
                raise
        try:
            grader.grade_into(store, submitted, out, todo, course, changes, notes)
            rows = [_unknown(s) for s in submissions if s.assignment_id not in sources]
            rows += [r for r in grade_rows(store) if (r["student_id"], r["assignment_id"]) in changes]
            if shard is None:  # a shard writes no view: the other shards may still be grading
                write_csv(out / "grades.csv", CSV_COLUMNS, grade_rows(store))
        finally:
            store.close()
    rows.sort(key=lambda r: (r["student_id"], r["assignment_id"]))
    return rows
