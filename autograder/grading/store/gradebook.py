"""nbgrader's gradebook as the class grader's store.

Everything goes through nbgrader's own API (``nbgrader.api``) into its database (``gradebook.db``,
SQLite, or any ``db_url`` nbgrader accepts, PostgreSQL included), so that formgrader shows the
grader's scores, ``nbgrader export`` exports them and manual grades are added on top:

- the assignment's structure (notebook, grade, solution and source cells, checksums) is recorded
  by nbgrader's own preprocessors, run on ``solutions/`` as ``nbgrader generate_assignment`` runs
  them, when it is missing or its test cells or points changed;
- each graded submission is written whole, in one transaction (a class run records together the
  submissions graded while it wrote the last ones, :meth:`Store.record_all`: one commit for all):
  the ``SubmittedAssignment`` with its timestamp, each test cell's ``Grade.auto_score`` (a manual
  score given in formgrader is kept and the cell marked for review, as ``nbgrader autograde``
  does), the failure message as that cell's
  ``Comment.auto_comment`` (last line ``[cause: <key>]`` when the check named a cause, for a
  person to read), the grader's own rows (``own_tables``: its status, when it recorded the
  submission, each cause key in a field only it fills), and the
  late penalty from nbgrader's late-submission plugin (``AssignLatePenalties.plugin_class``);
- on SQLite, a lock file beside the database keeps two ``grade`` runs from writing at once (the
  second refuses with a message); a server database takes concurrent writers (shards), and a
  student or assignment created by another writer in the meantime is found, not duplicated.
"""

from __future__ import annotations

import copy
import fcntl
import os
import shutil
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path

import nbformat
from nbgrader import api as nbgrader_api
from nbgrader.api import (
    Comment,
    Grade,
    Gradebook,
    InvalidEntry,
    MissingEntry,
    Student,
    SubmittedAssignment,
    SubmittedNotebook,
)
from nbgrader.preprocessors import (
    AssignLatePenalties,
    CheckCellMetadata,
    ClearOutput,
    ClearSolutions,
    ComputeChecksums,
    LockCells,
    SaveCells,
)
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError, IntegrityError
from traitlets.config import Config

from ...compare.causes import with_cause_line
from ..judge.assemble import questions
from . import own_tables
from .own_tables import STATUS_TABLE, Cause, Graded, Status

__all__ = ["StoreBusy", "Store", "Recorded", "STATUS_TABLE", "sqlite_path"]


class StoreBusy(RuntimeError):
    """Another ``grade`` run holds the lock of this SQLite gradebook (the message says which)."""


def sqlite_path(db_url: str) -> Path | None:
    """The database file of a SQLite ``db_url`` (None for a server database or ``:memory:``)."""
    url = make_url(db_url)
    if url.get_backend_name() != "sqlite" or url.database in (None, "", ":memory:"):
        return None
    return Path(url.database)


@dataclass(frozen=True)
class Recorded:
    """What recording one submission changed: its score before (None: new) and after (points,
    after any late penalty), the late penalty in points (0: on time, or no penalty) and how late
    it came (nbgrader's ``total_seconds_late``: 0 when on time, an extension included)."""

    old: float | None
    new: float
    late_penalty: float = 0.0
    seconds_late: float = 0.0


class Store:
    """An open gradebook to record graded submissions in (use as a context manager).

    Args:
        db_url: nbgrader's ``db_url`` (``sqlite:////abs/path/gradebook.db``, ``postgresql://...``).
        config: the course's nbgrader configuration (``store.config.course_config``): the
            ``ClearSolutions`` stub used when recording an assignment's structure, and the
            late-submission plugin.

    Raises:
        StoreBusy: SQLite, and another run holds the lock.
    """

    def __init__(self, db_url: str, config: Config | None = None):
        self.db_url, self.config = db_url, config or Config()
        self.extensions: dict[tuple[str, str], object] = {}  # (student, assignment): timedelta, set on writing
        self._lock = None
        path = sqlite_path(db_url)
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._lock = _lock(path)
        try:
            _alembic_on_path()
            with _alembic_head_in_process():
                self.gb = _open_gradebook(db_url)
            try:  # after nbgrader made (and versioned) its own tables
                own_tables.create(self.gb.engine)
            except DBAPIError:  # another writer of a server gradebook created it meanwhile
                own_tables.create(self.gb.engine)
            late = AssignLatePenalties(config=self.config)
            late.init_plugin()
            self._late = late
        except BaseException:
            self._unlock()
            raise

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection and release the lock."""
        try:
            self.gb.close()
            self.gb.engine.dispose()  # every connection closed before the lock's descriptor is
        finally:
            self._unlock()

    def _unlock(self) -> None:
        if self._lock is not None:
            self._lock.close()
            self._lock = None

    # -- structure -------------------------------------------------------------------------

    def _find_or_add(self, find, add, name: str, **kwargs):
        try:
            return find(name)
        except MissingEntry:
            pass
        try:
            return add(name, **kwargs)
        except InvalidEntry:  # another writer (a shard on the same server) added it meanwhile
            self.gb.db.rollback()
            return find(name)

    def student(self, student_id: str):
        """nbgrader's ``Student`` of that id, added when missing."""
        return self._find_or_add(self.gb.find_student, self.gb.add_student, student_id)

    def prepare(self, assignment_id: str, notebook_file: str, source: nbformat.NotebookNode) -> None:
        """Make sure the gradebook holds the assignment and its notebook's cells as
        ``nbgrader generate_assignment`` records them from ``source`` (the nbgrader source
        notebook). Nothing is rewritten when its test cells and their points are unchanged.

        Raises:
            RuntimeError: nbgrader's own refusal to add or remove cells of a notebook that has
                submissions (the source's test cells changed after grading started).
        """
        self._find_or_add(self.gb.find_assignment, self.gb.add_assignment, assignment_id)
        notebook_id = Path(notebook_file).stem
        want = {q.grade_id: q.points for q in questions(source)}
        try:
            notebook = self.gb.find_notebook(notebook_id, assignment_id)
            if {c.name: c.max_score for c in notebook.grade_cells} == want:
                return
        except MissingEntry:
            pass
        self.gb.db.commit()  # SaveCells writes through a connection of its own
        resources = {
            "language": "python",
            "nbgrader": {"db_url": self.db_url, "assignment": assignment_id, "notebook": notebook_id},
        }
        nb = copy.deepcopy(source)
        try:
            # generate_assignment's steps up to SaveCells (InstantiateTests and IncludeHeaderFooter
            # change nothing in this course's sources): the same cells, sources and checksums
            for step in (LockCells, ClearSolutions, ClearOutput, CheckCellMetadata, ComputeChecksums, SaveCells):
                nb, resources = step(config=self.config).preprocess(nb, resources)
        except (InvalidEntry, IntegrityError):
            # another writer on a server gradebook recorded the same notebook first: use theirs
            self.gb.db.rollback()
            self.gb.find_notebook(notebook_id, assignment_id)
        self.gb.db.expire_all()

    def set_duedate(self, assignment_id: str, duedate: str | datetime) -> None:
        """Set the assignment's due date (as ``nbgrader db assignment add --duedate`` does)."""
        self.gb.update_or_create_assignment(assignment_id, duedate=duedate)

    def duedate(self, assignment_id: str) -> datetime | None:
        """The assignment's due date (naive UTC), None when it has none or is not in the store."""
        try:
            return self.gb.find_assignment(assignment_id).duedate
        except MissingEntry:
            return None

    # -- submissions ---------------------------------------------------------------------------

    def record(self, result, notebook_file: str, timestamp: datetime | None) -> Recorded:
        """Write one graded submission (a ``grade_one.Result``) in one transaction, replacing the
        grader's own earlier result for it; manual scores and comments are kept. The assignment
        must be :meth:`prepare`\\ d. ``timestamp``: when it was submitted (naive UTC, as
        ``nbgrader.utils.parse_utc`` gives), None when unknown (then it is never late).

        Returns:
            The submission's score (after any late penalty) before and after.
        """
        return self.record_all([(result, notebook_file, timestamp)])[0]

    def record_all(self, items) -> list[Recorded]:
        """Write graded submissions, each as :meth:`record` writes one, in one transaction: all of
        them or none (a run killed meanwhile loses this batch, which a rerun grades again), one
        commit (and one ``fsync`` of a SQLite gradebook) for all. ``items``: ``(result,
        notebook_file, timestamp)`` of distinct submissions.

        Returns:
            A :class:`Recorded` per item, in order.
        """
        for attempt in (1, 2):
            try:
                return self._record_all(items)
            except IntegrityError:
                if attempt == 2:
                    raise
                # a server gradebook: another writer added the same student meanwhile; again, finding it
        raise AssertionError("unreachable")

    def _record_all(self, items) -> list[Recorded]:
        db, written = self.gb.db, []
        try:
            for result, notebook_file, timestamp in items:
                written.append(self._write(result, notebook_file, timestamp))
            db.commit()
        except BaseException:
            db.rollback()
            raise
        recorded = []
        for submission, old in written:
            db.expire(submission)
            penalty = float(submission.late_submission_penalty or 0)
            recorded.append(Recorded(old, _final(submission), penalty, float(submission.total_seconds_late)))
        return recorded

    def _write(self, result, notebook_file: str, timestamp: datetime | None):
        """Write one submission into the open transaction; ``(its SubmittedAssignment, old score)``."""
        gb, db = self.gb, self.gb.db
        assignment = gb.find_assignment(result.assignment_id)
        notebook_id = Path(notebook_file).stem
        by_id = {q.grade_id: q for q in result.questions}
        try:
            submission = gb.find_submission(result.assignment_id, result.student_id)
            old = _final(submission)
        except MissingEntry:
            try:
                student = gb.find_student(result.student_id)
            except MissingEntry:  # added in this same transaction (gb.add_student would commit apart)
                student = Student(id=result.student_id)
                db.add(student)
            submission, old = SubmittedAssignment(assignment=assignment, student=student), None
            db.add(submission)
        submission.timestamp = timestamp
        if (result.student_id, result.assignment_id) in self.extensions:  # a shard's part: the course's extension
            submission.extension = self.extensions[(result.student_id, result.assignment_id)]
        causes: dict = {}
        with db.no_autoflush:  # objects are built whole before anything is written
            graded = self._fill(submission, assignment, notebook_id, by_id, causes)
        db.flush()
        db.merge(Status(submission_id=submission.id, status=result.status))
        db.merge(Graded(submission_id=submission.id, graded_at=datetime.now(UTC).replace(tzinfo=None)))
        for comment, cause in causes.items():  # the cause key in a field of its own, filled only here
            if cause:
                db.merge(Cause(comment_id=comment.id, cause=cause))
            elif (row := db.get(Cause, comment.id)) is not None:
                db.delete(row)
        if graded is not None:
            self._late_penalty(submission, graded)
        return submission, old

    def _fill(self, submission, assignment, notebook_id: str, by_id: dict, causes: dict):
        """Set the grades and comments of ``submission`` from ``by_id`` (``{grade_id:
        QuestionResult}``), making the rows ``Gradebook.add_submission`` makes where missing, and
        ``causes[comment] = cause key`` for each test cell graded. Returns the ``SubmittedNotebook``
        graded (None when the assignment has no such notebook)."""
        db, graded = self.gb.db, None
        have = {n.notebook.name: n for n in submission.notebooks}
        for notebook in assignment.notebooks:
            sub_nb = have.get(notebook.name)
            if sub_nb is None:
                sub_nb = SubmittedNotebook(notebook=notebook, assignment=submission)
                db.add(sub_nb)
            grades = {g.cell_id: g for g in sub_nb.grades}
            comments = {c.cell_id: c for c in sub_nb.comments}

            def made(kind, cell, known, sub_nb=sub_nb):
                if cell.id not in known:
                    known[cell.id] = kind(cell_id=cell.id, notebook=sub_nb)
                    db.add(known[cell.id])
                return known[cell.id]

            for cell in notebook.grade_cells:
                grade, comment = made(Grade, cell, grades), made(Comment, cell, comments)
                if notebook.name == notebook_id:
                    q = by_id.get(cell.name)
                    grade.auto_score = q.score if q is not None else 0.0
                    # as nbgrader's SaveAutoGrades: a manual score stays, and is flagged for review
                    grade.needs_manual_grade = grade.manual_score is not None
                    failed = q is not None and (q.message or q.cause)
                    comment.auto_comment = with_cause_line(q.message, q.cause) if failed else None
                    causes[comment] = q.cause if failed else ""
            for cell in [*notebook.solution_cells, *notebook.task_cells]:  # as add_submission makes them
                made(Comment, cell, comments)
            for cell in notebook.task_cells:
                made(Grade, cell, grades)
            if notebook.name == notebook_id:
                graded = sub_nb
        return graded

    def _late_penalty(self, submission, notebook) -> None:
        """Set ``notebook``'s late penalty as nbgrader's ``AssignLatePenalties`` does, with the
        plugin the course configures (none when on time, given any extension)."""
        self.gb.db.flush()
        self.gb.db.expire(notebook, ["score"])
        notebook.late_submission_penalty = None
        late = submission.total_seconds_late
        if late > 0:
            penalty = self._late.plugin_inst.late_submission_penalty(submission.student_id, notebook.score, late)
            if penalty is not None:
                notebook.late_submission_penalty = self._late._check_late_penalty(notebook, penalty)

    def grant_extension(self, assignment_id: str, student_id: str, hours: float) -> Recorded:
        """Give one student ``hours`` more than the due date for one assignment (nbgrader's
        ``SubmittedAssignment.extension``; 0 removes it) and recompute the late penalty.

        Raises:
            nbgrader.api.MissingEntry: that submission is not in the store (grade it first).
        """
        submission = self.gb.find_submission(assignment_id, student_id)
        old = _final(submission)
        self.gb.grant_extension(assignment_id, student_id, hours=hours)
        for notebook in submission.notebooks:
            self._late_penalty(submission, notebook)
        self.gb.db.commit()
        self.gb.db.expire(submission)
        return Recorded(old, _final(submission))

    def statuses(self) -> dict[str, str]:
        """``{SubmittedAssignment.id: the grader's status}``."""
        return {s.submission_id: s.status for s in self.gb.db.query(Status)}

    def causes(self) -> dict[str, str]:
        """``{Comment.id: the cause key the grader recorded}`` (``own_tables``)."""
        return {c.comment_id: c.cause for c in self.gb.db.query(Cause)}


def _open_gradebook(db_url: str, tries: int = 3) -> Gradebook:
    """nbgrader's ``Gradebook(db_url)``. A new gradebook's tables are made by whoever opens it first:
    when another process (formgrader, ``nbgrader export``, a second reader) makes them between
    nbgrader's check and its ``CREATE TABLE``, nbgrader raises "table ... already exists"; opened
    again, the gradebook is found made and is used as it is."""
    for attempt in range(tries):
        try:
            return Gradebook(db_url)
        except DBAPIError:
            if attempt == tries - 1:
                raise
            time.sleep(0.5)
    raise AssertionError("unreachable")


def _alembic_on_path() -> None:
    """nbgrader runs ``alembic`` (from PATH) to version a new gradebook: put this interpreter's
    ``bin/`` (the virtual environment's, where pip installed it) on PATH when it is not there."""
    if shutil.which("alembic") is None:
        os.environ["PATH"] = str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", "")


@contextmanager
def _alembic_head_in_process():
    """While a ``Gradebook`` opens: nbgrader versions a new database with the head revision of
    its migrations, which it learns by running ``alembic heads`` in a subprocess (seconds on a
    busy machine, once per new gradebook); alembic's own API gives the same revision in-process."""
    original = nbgrader_api.get_alembic_version
    nbgrader_api.get_alembic_version = _alembic_head
    try:
        yield
    finally:
        nbgrader_api.get_alembic_version = original


@lru_cache(maxsize=1)
def _alembic_head() -> str:
    from alembic.config import Config as AlembicConfig
    from alembic.script import ScriptDirectory

    config = AlembicConfig()
    config.set_main_option("script_location", str(Path(nbgrader_api.__file__).parent / "alembic"))
    return ScriptDirectory.from_config(config).get_current_head()


def _final(submission) -> float:
    """A submission's score as ``nbgrader export`` gives it: manual over auto, minus the late penalty."""
    return float(submission.score) - float(submission.late_submission_penalty or 0)


def _lock(path: Path):
    """Hold an exclusive ``flock`` on the database file itself (released when the process ends,
    even by SIGKILL). SQLite's own locks are POSIX record locks, which ``flock`` does not touch;
    the handle is closed only after the gradebook's connections are (closing a descriptor of the
    file drops the process's POSIX locks on it)."""
    handle = open(path, "ab")  # creates an empty file, which SQLite takes as an empty database
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = _flock_holder(path)
        handle.close()
        raise StoreBusy(
            f"another grade run ({f'pid {holder}' if holder else 'another process'}) is writing to {path}; "
            "wait for it to finish, or grade into another gradebook with --db"
        ) from None
    return handle


def _flock_holder(path: Path) -> int | None:
    """The pid holding a ``flock`` on ``path``, from ``/proc/locks`` (None when it cannot be told)."""
    try:
        inode = path.stat().st_ino
        for line in Path("/proc/locks").read_text().splitlines():
            fields = line.split()
            if len(fields) > 5 and fields[1] == "FLOCK" and fields[5].rsplit(":", 1)[-1] == str(inode):
                return int(fields[4])
    except (OSError, ValueError):
        pass
    return None
