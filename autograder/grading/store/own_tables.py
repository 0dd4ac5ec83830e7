"""The grader's own tables in nbgrader's database, for what nbgrader's schema has no place for.

autograder_status  ``submission_id`` -> the grader's status of the submission (``grades.csv``)
autograder_graded  ``submission_id`` -> when the grader recorded it (naive UTC): ``merge`` refuses a
                   part older than the target's own later result for the same submission
autograder_cause   ``comment_id`` -> the cause key of a failed test cell, a field only the grader
                   fills: never read back out of the comment's text, which quotes the learner

Keys are nbgrader's ids (``SubmittedAssignment.id``, ``Comment.id``). A gradebook made before a
table existed simply lacks its rows: :func:`read` gives ``{}`` for a missing table.
"""

from __future__ import annotations

from sqlalchemy import Column, DateTime, MetaData, String, Table, Text, inspect
from sqlalchemy.orm import declarative_base

__all__ = ["STATUS_TABLE", "GRADED_TABLE", "CAUSE_TABLE", "TABLES", "Status", "Graded", "Cause", "create", "read"]

STATUS_TABLE, GRADED_TABLE, CAUSE_TABLE = "autograder_status", "autograder_graded", "autograder_cause"
Base = declarative_base()


class Status(Base):
    """The grader's status of one submission."""

    __tablename__ = STATUS_TABLE
    submission_id = Column(String(32), primary_key=True)  # nbgrader's SubmittedAssignment.id
    status = Column(Text, nullable=False)


class Graded(Base):
    """When the grader last recorded one submission (naive UTC)."""

    __tablename__ = GRADED_TABLE
    submission_id = Column(String(32), primary_key=True)
    graded_at = Column(DateTime, nullable=False)


class Cause(Base):
    """The cause key of one failed test cell's autograder comment."""

    __tablename__ = CAUSE_TABLE
    comment_id = Column(String(32), primary_key=True)  # nbgrader's Comment.id
    cause = Column(Text, nullable=False)


TABLES = {STATUS_TABLE: "submission_id", GRADED_TABLE: "submission_id", CAUSE_TABLE: "comment_id"}


def create(engine) -> None:
    """Make the tables that are missing (after nbgrader made its own)."""
    Base.metadata.create_all(bind=engine)


def read(engine, table: str) -> dict[str, object]:
    """``{key: value}`` of one of :data:`TABLES` (``{}`` when the database has no such table)."""
    if not inspect(engine).has_table(table):
        return {}
    found = Table(table, MetaData(), autoload_with=engine)
    key = TABLES[table]
    value = next(c.name for c in found.columns if c.name != key)
    query = found.select().with_only_columns(found.c[key], found.c[value])
    with engine.connect() as connection:
        return {row[0]: row[1] for row in connection.execute(query)}
