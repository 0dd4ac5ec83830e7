"""Submissions as nbgrader's exchange leaves them: ``submitted/<student>/<assignment>/`` holding
the notebook, ``timestamp.txt`` (when the learner ran ``nbgrader submit``) and, from nbgrader 0.8
on, ``submission_secret.txt`` (what ``release_feedback`` hashes to name the learner's page)."""

from __future__ import annotations

from datetime import datetime
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


def submission_timestamp(folder: Path) -> tuple[datetime | None, str]:
    """When the submission in ``folder`` was made: its ``timestamp.txt`` parsed by
    ``nbgrader.utils.parse_utc`` (naive UTC, as nbgrader stores it), and "" or the problem
    (``(None, "")`` when there is no ``timestamp.txt``: never late)."""
    text = read_small(folder, TIMESTAMP)
    if text is None:
        return None, ""
    try:
        return parse_utc(text), ""
    except (ValueError, OverflowError) as error:
        return None, f"unreadable {TIMESTAMP} ({type(error).__name__}): graded as not late"
