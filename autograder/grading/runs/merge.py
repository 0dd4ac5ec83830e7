"""Merge part gradebooks (one per shard) into one, through nbgrader's API.

Where the shards of a job array cannot share a server database, each writes an nbgrader gradebook
of its own (SQLite); ``python -m autograder merge PARTS... --db TARGET`` then copies every part
into the target: the assignments' structure (notebooks and their grade, solution, task and source
cells), the students, and each submission with its timestamp, extension, grades, comments, late
penalty and the grader's status. A submission already in the target is updated in place, so a
merge is idempotent and a shard's rerun (which rewrote its part) replaces that shard's results;
manual scores and comments given in the target (formgrader) are kept, since parts hold none.
"""

from __future__ import annotations

from pathlib import Path

from nbgrader.api import Comment, Grade, Gradebook, MissingEntry, SubmittedAssignment, SubmittedNotebook
from sqlalchemy import MetaData, Table, inspect

from ..store.gradebook import STATUS_TABLE, Store
from ..store.views import CSV_COLUMNS, grade_rows, write_csv

__all__ = ["merge_gradebooks", "db_url"]


def db_url(path_or_url: str) -> str:
    """A database URL as nbgrader takes it: a URL as given, a file path as ``sqlite:///<abs path>``."""
    return path_or_url if "://" in path_or_url else f"sqlite:///{Path(path_or_url).resolve()}"


def _structure(part: Gradebook, target: Gradebook) -> None:
    for assignment in part.assignments:
        target.update_or_create_assignment(assignment.name, duedate=assignment.duedate)
        for notebook in assignment.notebooks:
            names = (notebook.name, assignment.name)
            target.update_or_create_notebook(*names, kernelspec=notebook.kernelspec)
            for cell in notebook.grade_cells:
                target.update_or_create_grade_cell(
                    cell.name, *names, max_score=cell.max_score, cell_type=cell.cell_type
                )
            for cell in notebook.solution_cells:
                target.update_or_create_solution_cell(cell.name, *names)
            for cell in notebook.task_cells:
                target.update_or_create_task_cell(cell.name, *names, max_score=cell.max_score, cell_type=cell.cell_type)
            for cell in notebook.source_cells:
                target.update_or_create_source_cell(
                    cell.name, *names, cell_type=cell.cell_type, locked=cell.locked, source=cell.source,
                    checksum=cell.checksum,
                )  # fmt: skip


def _cells(notebook) -> dict[tuple[str, str], object]:
    """A notebook's graded and commented cells by (kind, name): a cell that is both a grade and a
    solution cell in nbgrader is two rows of one name."""
    return {(c.type, c.name): c for c in [*notebook.grade_cells, *notebook.solution_cells, *notebook.task_cells]}


def _submission(part_sub, target: Gradebook):
    """Copy one submission into ``target`` (no commit); returns the target's SubmittedAssignment."""
    db = target.db
    student = part_sub.student
    target.update_or_create_student(
        student.id,
        first_name=student.first_name,
        last_name=student.last_name,
        email=student.email,
        lms_user_id=student.lms_user_id,
    )
    names = (part_sub.assignment.name, student.id)
    try:
        sub = target.find_submission(*names)
    except MissingEntry:  # made whole below, from the part's rows (as Gradebook.add_submission would)
        sub = SubmittedAssignment(assignment=target.find_assignment(names[0]), student=target.find_student(names[1]))
        db.add(sub)
    sub.timestamp, sub.extension = part_sub.timestamp, part_sub.extension
    have = {n.notebook.name: n for n in sub.notebooks}
    for part_nb in part_sub.notebooks:
        notebook = target.find_notebook(part_nb.notebook.name, names[0])
        sub_nb = have.get(notebook.name) or SubmittedNotebook(notebook=notebook, assignment=sub)
        db.add(sub_nb)
        sub_nb.flagged, sub_nb.late_submission_penalty = part_nb.flagged, part_nb.late_submission_penalty
        cells = _cells(notebook)
        grades = {(g.cell.type, g.cell.name): g for g in sub_nb.grades}
        comments = {(c.cell.type, c.cell.name): c for c in sub_nb.comments}
        for theirs in part_nb.grades:
            key = (theirs.cell.type, theirs.cell.name)
            mine = grades.get(key) or Grade(cell_id=cells[key].id, notebook=sub_nb)
            db.add(mine)
            mine.auto_score, mine.extra_credit = theirs.auto_score, theirs.extra_credit
            if theirs.manual_score is not None:
                mine.manual_score = theirs.manual_score
            mine.needs_manual_grade = theirs.needs_manual_grade or mine.manual_score is not None
        for theirs in part_nb.comments:
            key = (theirs.cell.type, theirs.cell.name)
            mine = comments.get(key) or Comment(cell_id=cells[key].id, notebook=sub_nb)
            db.add(mine)
            mine.auto_comment = theirs.auto_comment
            if theirs.manual_comment is not None:
                mine.manual_comment = theirs.manual_comment
    db.flush()
    return sub


def _statuses(part: Gradebook, target: Gradebook, ids: dict[str, str]) -> None:
    """Copy the part's status rows (the store's ``STATUS_TABLE``, keyed by nbgrader's
    SubmittedAssignment id, when the part has one) to the target, each under the target's id of
    the same submission (``ids``: part id -> target id)."""
    if not inspect(part.engine).has_table(STATUS_TABLE):
        return
    theirs = Table(STATUS_TABLE, MetaData(), autoload_with=part.engine)
    mine = theirs.to_metadata(MetaData())
    mine.create(target.engine, checkfirst=True)
    with part.engine.connect() as read:
        rows = [dict(r._mapping) for r in read.execute(theirs.select())]
    rows = [dict(r, submission_id=ids[r["submission_id"]]) for r in rows if r["submission_id"] in ids]
    with target.engine.begin() as write:
        if rows:
            write.execute(mine.delete().where(mine.c.submission_id.in_([r["submission_id"] for r in rows])))
            write.execute(mine.insert(), rows)


def merge_gradebooks(parts: list[str], target: str, out: Path | None = None) -> int:
    """Copy every part gradebook into the ``target`` gradebook (database URLs or SQLite file
    paths), each part in one transaction, through the store (``store.gradebook.Store``: on SQLite,
    no ``grade`` run writes the target meanwhile); with ``out``, then write ``out/grades.csv``
    from the target (every submission it holds). No parts: only the view is written (shards that
    shared a server gradebook). Returns the number of submissions copied.

    Raises:
        FileNotFoundError: a part is a file path that does not exist (nothing is copied).
        store.gradebook.StoreBusy: a ``grade`` run is writing to the SQLite target.
    """
    for part in parts:
        if "://" not in part and not Path(part).is_file():
            raise FileNotFoundError(f"no such part gradebook: {part}")
    copied = 0
    with Store(db_url(target)) as store:
        into = store.gb
        for part in parts:
            with Gradebook(db_url(part)) as source:
                _structure(source, into)
                ids = {}
                try:
                    for assignment in source.assignments:
                        for part_sub in assignment.submissions:
                            with into.db.no_autoflush:  # rows are built whole before anything is written
                                ids[part_sub.id] = _submission(part_sub, into).id
                    into.db.commit()
                except BaseException:
                    into.db.rollback()
                    raise
                _statuses(source, into, ids)
                copied += len(ids)
        if out is not None:
            write_csv(Path(out) / "grades.csv", CSV_COLUMNS, grade_rows(store))
    return copied
