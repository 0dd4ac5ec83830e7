"""An LMS zip's notebooks kept in the course's ``submitted/`` folder, where ``nbgrader collect``
(or ``nbgrader zip_collect``) would have put them.

Formgrader counts an assignment's submissions by the folders under ``submitted/`` (nbgrader's
``NbGraderAPI.get_submitted_students``), not by the gradebook: a submission graded only from a
scratch folder is in its average but not in its count, and formgrader cannot open it.

A learner may have handed in both ways. The two are ordered by the times the platforms recorded
(the exchange's ``timestamp.txt``, the zip entry's time, read as UTC: a zip stores no time zone),
and the newer one is graded, whichever way it came: the scratch folder then holds the exchange's
folder when that is newer. A folder already in ``submitted/`` keeps its own timestamp: the zip's
copy of the very notebook the exchange holds changes nothing there. A zip's notebook given to a
student by a display name alone (the roster has no id for them) never replaces one already there,
whatever the times: the name is the learner's choice, and only the instructor (with an id) decides
that it is theirs. Nothing is lost: the one not
graded is kept in ``submitted-replaced/<UTC time>/<student>/<assignment>/`` with its time in its
``timestamp.txt``, and said; a zip's notebook kept over an exchange submission carries the zip's
time, so a late hand-in uploaded again is still late. A path that is a symbolic link is left alone
and said.
"""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path

from ..names import terminal
from .exchange import TIMESTAMP, submission_timestamp

__all__ = ["keep_in_course", "timestamp_text"]


def timestamp_text(when: datetime) -> str:
    """``when`` (naive UTC) as ``nbgrader submit`` writes ``timestamp.txt``."""
    return when.strftime("%Y-%m-%d %H:%M:%S.%f UTC")


def _notebooks(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.suffix == ".ipynb" and p.is_file()}


def _aside(course_submitted: Path, stamp: str, student: str, assignment: str) -> Path:
    aside = course_submitted.parent / "submitted-replaced" / stamp / student / assignment
    aside.parent.mkdir(parents=True, exist_ok=True)
    return aside


def keep_in_course(
    scratch: Path, course_submitted: Path, placed, times: dict | None = None, by_name=frozenset()
) -> list[str]:
    """Keep each ``(student, assignment)`` of ``placed`` (from ``scratch/<student>/<assignment>/``)
    in ``course_submitted/<student>/<assignment>/``, the newer of it and what is there graded (see
    the module docstring). ``times``: ``{(student, assignment): the zip entry's time}``; ``by_name``:
    those the zip gives a student by a display name alone (the learner's choice on the platform):
    one of them never replaces a submission already there, whatever its time; it is kept aside and
    the instructor decides (an id in the roster does, then).

    Returns:
        Lines for the instructor: which of two submissions is graded and where the other is kept,
        each folder not written.
    """
    notes, stamp, times = [], datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ"), times or {}
    for student, assignment in sorted(placed):
        source, target = scratch / student / assignment, course_submitted / student / assignment
        who = f"{terminal(student)}/{terminal(assignment)}"
        if any(p.is_symlink() for p in (course_submitted, course_submitted / student, target)):
            notes.append(f"{terminal(str(target))} is a symbolic link: the zip's notebook was graded, not kept there")
            continue
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copytree(source, target)
            continue
        if target.is_dir() and _notebooks(target) == _notebooks(source):  # the exchange's own notebook
            _replace(source, target)  # graded with the exchange folder's own timestamp
            continue
        theirs, unreadable = submission_timestamp(target) if target.is_dir() else (None, "")
        theirs = None if unreadable else theirs  # a time that cannot be read orders nothing
        zipped = times.get((student, assignment))
        if (student, assignment) in by_name:
            aside = _aside(course_submitted, stamp, student, assignment)
            shutil.copytree(source, aside)
            if zipped is not None:
                (aside / TIMESTAMP).write_text(timestamp_text(zipped), encoding="utf-8")
            _replace(source, target)
            notes.append(
                f"{who}: refused to replace the submission there with the zip's, matched to {terminal(student)} by "
                f"a display name only (a learner can choose it): graded the one there; the zip's is kept at {aside}. "
                "Your decision: give the roster their LMS id (canvas_id or moodle_id) and grade again"
            )
            continue
        if theirs is not None and (zipped is None or theirs > zipped):  # a zip time that is no date orders nothing
            aside = _aside(course_submitted, stamp, student, assignment)
            shutil.copytree(source, aside)
            if zipped is not None:
                (aside / TIMESTAMP).write_text(timestamp_text(zipped), encoding="utf-8")
            _replace(source, target)
            zip_time = f"{zipped:%Y-%m-%d %H:%M}" if zipped else "no time"
            notes.append(
                f"{who}: the exchange's submission ({theirs:%Y-%m-%d %H:%M} UTC) is newer than the zip's "
                f"({zip_time}): graded the exchange's; the zip's is kept at {aside}"
            )
            continue
        aside = _aside(course_submitted, stamp, student, assignment)
        target.rename(aside)
        if theirs is not None and zipped is not None:  # ordered by time: the zip's keeps its own
            (source / TIMESTAMP).write_text(timestamp_text(zipped), encoding="utf-8")
        shutil.copytree(source, target)
        when = f" ({theirs:%Y-%m-%d %H:%M} UTC, the zip's {zipped:%Y-%m-%d %H:%M})" if theirs and zipped else ""
        notes.append(f"{who}: the earlier submission{when} was moved to {aside}")
    return notes


def _replace(scratch_folder: Path, kept: Path) -> None:
    """Make the scratch folder a copy of the course's ``kept`` folder (what this run grades)."""
    shutil.rmtree(scratch_folder)
    shutil.copytree(kept, scratch_folder, symlinks=True)
