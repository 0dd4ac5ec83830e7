"""Where graded submissions are kept: nbgrader's own gradebook, and the views written from it.

gradebook   nbgrader's ``Gradebook`` (``gradebook.db`` or any ``db_url``) as the store: the assignment's
            structure as ``generate_assignment`` records it, each graded submission whole in one
            transaction (with the others graded meanwhile; scores, the failure message as the
            autograder comment, the status), late penalties through nbgrader's late-submission
            plugin; a lock so two runs never interleave on SQLite
own_tables  the grader's own tables beside nbgrader's: status, when recorded, cause keys
config      the nbgrader configuration of a course folder (``nbgrader_config.py``), as nbgrader loads it
views       ``grades.csv`` written from the store, atomically

Formgrader, ``nbgrader export`` and manual grading read and write the same database, so the
grader's scores and an instructor's manual grades sit side by side (a rerun keeps manual scores,
as ``nbgrader autograde`` does).
"""

from pathlib import Path

__all__ = ["default_db_url"]


def default_db_url(out: Path) -> str:
    """The store of a ``grade --out OUT`` run with no ``--db``: ``OUT/gradebook.db`` (never the
    course's), where ``report`` and ``export`` then find it."""
    return "sqlite:///" + str(Path(out).resolve() / "gradebook.db")
