"""Submissions as nbgrader's exchange leaves them: ``submitted/<student>/<assignment>/`` holding
the notebook, ``timestamp.txt`` (when the learner ran ``nbgrader submit``) and, from nbgrader 0.8
on, ``submission_secret.txt`` (what ``release_feedback`` hashes to name the learner's page)."""

from __future__ import annotations

import os
import re
from datetime import UTC, datetime
from pathlib import Path

from nbgrader.utils import parse_utc

__all__ = ["TIMESTAMP", "SECRET", "read_small", "submission_timestamp"]

TIMESTAMP, SECRET = "timestamp.txt", "submission_secret.txt"
_MAX_BYTES = 1000  # a timestamp or a secret is one short line; more is not read


def read_small(folder: Path, name: str) -> str | None:
    """The text of ``folder/name`` when it is a regular file (not a symbolic link: it could point
    at any file the grader can read), at most 1000 bytes, stripped; None when there is none."""
    path = folder / name
    if path.is_symlink() or not path.is_file():
        return None
    with open(path, "rb") as f:
        return f.read(_MAX_BYTES).decode("utf-8", errors="replace").strip()


# what nbgrader submit writes ("2026-01-20 10:00:00.000000 UTC"), or an ISO time; the zone, when there
# is one, a numeric offset or a zone's name, never a path (dateutil's gettz would open any file named)
_TIMESTAMP = re.compile(
    r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?"
    r"(?: ?(?:[+-]\d{2}:?\d{2}|Z|[A-Za-z][A-Za-z0-9_+-]{0,30}(?:/[A-Za-z][A-Za-z0-9_+-]{0,30}){0,2}))?"
)
_EARLIEST, _LATEST = datetime(1970, 1, 1), datetime(2200, 1, 1)  # a submission's time lies between


def submission_timestamp(folder: Path) -> tuple[datetime | None, str]:
    """When the submission in ``folder`` was made: its ``timestamp.txt`` parsed by
    ``nbgrader.utils.parse_utc`` (naive UTC, as nbgrader stores it), and "" or the problem
    (``(None, "")`` when there is no ``timestamp.txt``: never late).

    A ``timestamp.txt`` that is there but cannot be read as a time (another form, a zone that is a
    path, a year outside 1970-2199, a folder or a link in its place) proves no time: it is taken as now,
    the latest it can be (a submission is never made after it is graded), and said. So an
    unreadable time is never "on time" while an honest late learner pays a penalty, and every
    time the store compares is an ordinary naive UTC ``datetime``.
    """
    text = read_small(folder, TIMESTAMP)
    if text is None and not os.path.lexists(folder / TIMESTAMP):
        return None, ""
    try:
        if text is None:  # there, and no regular file: a folder, a link, a FIFO
            raise ValueError("not a regular file")
        if not _TIMESTAMP.fullmatch(text):
            raise ValueError("not a time as nbgrader submit writes it")
        when = parse_utc(text)
        if not (isinstance(when, datetime) and when.tzinfo is None and _EARLIEST < when < _LATEST):
            raise ValueError("a time outside 1970-2199")
        return when, ""
    except (ValueError, OverflowError, TypeError, AttributeError, LookupError) as error:
        now = datetime.now(UTC).replace(tzinfo=None)
        why = f"unreadable {TIMESTAMP} ({type(error).__name__})"
        return now, f"{why}: taken as {now:%Y-%m-%d %H:%M} UTC, the latest it can be"
