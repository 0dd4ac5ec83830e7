"""Merge part gradebooks (one per shard) into one, through nbgrader's API.

Where the shards of a job array cannot share a server database, each writes an nbgrader gradebook
of its own (SQLite); ``python -m autograder merge PARTS... --db TARGET`` then copies every part
into the target: the assignments' structure (notebooks and their grade, solution, task and source
cells), the students, and each submission with its timestamp, extension, grades, comments, late
penalty and the grader's status. A submission already in the target is updated in place, so a
merge is idempotent and a shard's rerun (which rewrote its part) replaces that shard's results;
manual scores and comments given in the target (formgrader) are kept, since parts hold none.

A part is data that may disagree with the target, and merging is arithmetic, not an accident: a
part is refused whole (one line; the other parts are merged) when its test cells or points differ
from the target's, when an assignment's due date differs from the target's (or the part has none
where the target has one: its late penalties were computed without it), when a submission's
extension differs from the target's (given after the shard graded), when the target holds a later
result for one of its submissions (``own_tables.GRADED_TABLE``: a regrade after the shard ran), or
when a student id is not a safe id. A due date the target lacks is taken from the part; the
target's own is never overwritten. The grader's own rows (status, time graded, cause keys) travel
with each submission.
"""

from __future__ import annotations

from pathlib import Path

from nbgrader.api import Comment, Grade, Gradebook, MissingEntry, SubmittedAssignment, SubmittedNotebook

from ..names import UnsafeId, check_id, gradebook_name, terminal
from ..store import own_tables
from ..store.gradebook import Store
from ..store.views import CSV_COLUMNS, grade_rows, write_csv

__all__ = ["merge_gradebooks", "db_url"]


def db_url(path_or_url: str) -> str:
    """A database URL as nbgrader takes it: a URL as given, a file path as ``sqlite:///<abs path>``."""
    return path_or_url if "://" in path_or_url else f"sqlite:///{Path(path_or_url).resolve()}"


def _disagreement(part: Gradebook, target: Gradebook) -> str:
    """Why ``part`` cannot be merged into ``target`` ("" when it can): see the module docstring."""
    graded_at = own_tables.read(target.engine, own_tables.GRADED_TABLE)
    theirs_at = own_tables.read(part.engine, own_tables.GRADED_TABLE)
    for assignment in part.assignments:
        try:
            mine = target.find_assignment(assignment.name)
        except MissingEntry:
            continue
        if mine.duedate is not None and assignment.duedate != mine.duedate:
            return f"{assignment.name}'s due date is {assignment.duedate} there, {mine.duedate} here"
        for notebook in assignment.notebooks:
            ours = {n.name: n for n in mine.notebooks}.get(notebook.name)
            cells = {c.name: c.max_score for c in notebook.grade_cells}
            if ours is not None and ours.grade_cells and {c.name: c.max_score for c in ours.grade_cells} != cells:
                return f"{assignment.name}'s test cells or points differ from the target's"
        for sub in assignment.submissions:
            try:
                check_id(sub.student.id, "student id")
            except UnsafeId as error:
                return str(error)
            try:
                held = target.find_submission(assignment.name, sub.student.id)
            except MissingEntry:
                continue
            who = f"{terminal(sub.student.id)}/{assignment.name}"
            if held.extension is not None and held.extension != sub.extension:
                return f"{who} has an extension of {held.extension} here, {sub.extension} there (given after it graded)"
            later, then = graded_at.get(held.id), theirs_at.get(sub.id)
            if later is not None and then is not None and _time(later) > _time(then):
                return f"{who} was graded again here ({later}) after this part graded it ({then})"
    return ""


def _time(value) -> str:
    """A time as the database gives it (a ``datetime``, or SQLite's text), comparable with another."""
    return value.isoformat(sep=" ") if hasattr(value, "isoformat") else str(value)


def _structure(part: Gradebook, target: Gradebook) -> None:
    for assignment in part.assignments:
        try:
            due = target.find_assignment(assignment.name).duedate or assignment.duedate
        except MissingEntry:
            due = assignment.duedate
        target.update_or_create_assignment(assignment.name, duedate=due)  # the target's own never overwritten
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


def _submission(part_sub, target: Gradebook, comment_ids: dict):
    """Copy one submission into ``target`` (no commit); returns the target's SubmittedAssignment.
    ``comment_ids`` gets ``{part's Comment.id: target's Comment}`` of the comments copied."""
    db = target.db
    student = part_sub.student
    target.update_or_create_student(
        student.id,
        first_name=gradebook_name(student.first_name or ""),
        last_name=gradebook_name(student.last_name or ""),
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
            comment_ids[theirs.id] = mine
    db.flush()
    return sub


def _own_rows(part: Gradebook, target: Gradebook, ids: dict[str, str], comment_ids: dict[str, str]) -> None:
    """Copy the grader's own rows of each copied submission and comment (``own_tables``) under the
    target's ids of the same rows; a cause the part no longer holds is dropped."""
    db = target.db
    for model, table, map_ in (
        (own_tables.Status, own_tables.STATUS_TABLE, ids),
        (own_tables.Graded, own_tables.GRADED_TABLE, ids),
        (own_tables.Cause, own_tables.CAUSE_TABLE, comment_ids),
    ):
        rows, key = own_tables.read(part.engine, table), own_tables.TABLES[table]
        value = next(c.name for c in model.__table__.columns if c.name != key)
        for theirs, mine in map_.items():
            if theirs in rows:
                db.merge(model(**{key: mine, value: rows[theirs]}))
            elif model is own_tables.Cause and (held := db.get(model, mine)) is not None:
                db.delete(held)
    db.commit()


def merge_gradebooks(parts: list[str], target: str, out: Path | None = None, refused: list | None = None) -> int:
    """Copy every part gradebook into the ``target`` gradebook (database URLs or SQLite file
    paths), each part in one transaction, through the store (``store.gradebook.Store``: on SQLite,
    no ``grade`` run writes the target meanwhile); with ``out``, then write ``out/grades.csv``
    from the target (every submission it holds). No parts: only the view is written (shards that
    shared a server gradebook). A part that disagrees with the target (module docstring) is not
    copied: ``refused`` gets ``"PART: why"`` for it and the others are merged. Returns the number
    of submissions copied.

    Raises:
        FileNotFoundError: a part is a file path that does not exist (nothing is copied).
        store.gradebook.StoreBusy: a ``grade`` run is writing to the SQLite target.
    """
    for part in parts:
        if "://" not in part and not Path(part).is_file():
            raise FileNotFoundError(f"no such part gradebook: {part}")
    copied, refused = 0, refused if refused is not None else []
    with Store(db_url(target)) as store:
        into = store.gb
        for part in parts:
            try:
                with Gradebook(db_url(part)) as source:
                    copied += _merge_one(source, into)
            except _Refused as why:
                refused.append(f"{part}: {why}")
            except Exception as error:  # noqa: BLE001 -- one unreadable part is its own line
                into.db.rollback()
                refused.append(f"{part}: not a part gradebook this merge can read ({type(error).__name__})")
        if out is not None:
            write_csv(Path(out) / "grades.csv", CSV_COLUMNS, grade_rows(store))
    return copied


class _Refused(Exception):
    """A part that disagrees with the target (the message says how)."""


def _merge_one(source: Gradebook, into: Gradebook) -> int:
    if why := _disagreement(source, into):
        raise _Refused(why)
    _structure(source, into)
    ids, comments = {}, {}
    try:
        for assignment in source.assignments:
            for part_sub in assignment.submissions:
                with into.db.no_autoflush:  # rows are built whole before anything is written
                    ids[part_sub.id] = _submission(part_sub, into, comments).id
        into.db.commit()
    except BaseException:
        into.db.rollback()
        raise
    _own_rows(source, into, ids, {theirs: mine.id for theirs, mine in comments.items()})
    return len(ids)
