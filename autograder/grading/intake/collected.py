"""An LMS zip's notebooks kept in the course's ``submitted/`` folder, where ``nbgrader collect``
(or ``nbgrader zip_collect``) would have put them.

Formgrader counts an assignment's submissions by the folders under ``submitted/`` (nbgrader's
``NbGraderAPI.get_submitted_students``), not by the gradebook: a submission graded only from a
scratch folder is in its average but not in its count, and formgrader cannot open it. Nothing is
lost: a different notebook already there (an earlier exchange submission) is moved to
``submitted-replaced/<UTC time>/<student>/<assignment>/`` first, and a path that is a symbolic link
is left alone and said.
"""

from __future__ import annotations

import filecmp
import shutil
from datetime import UTC, datetime
from pathlib import Path

from ..names import terminal

__all__ = ["keep_in_course"]


def _same(kept: Path, new: Path) -> bool:
    """The folder ``kept`` holds the files of ``new`` with the same bytes, and no others."""
    names = sorted(p.name for p in new.iterdir())
    if not kept.is_dir() or sorted(p.name for p in kept.iterdir()) != names:
        return False
    _, mismatch, errors = filecmp.cmpfiles(kept, new, names, shallow=False)
    return not mismatch and not errors


def keep_in_course(scratch: Path, course_submitted: Path, placed) -> list[str]:
    """Copy each ``(student, assignment)`` of ``placed`` from ``scratch/<student>/<assignment>/``
    to ``course_submitted/<student>/<assignment>/``.

    Returns:
        Lines for the instructor: each earlier submission moved aside, each folder not written.
    """
    notes, stamp = [], datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    for student, assignment in sorted(placed):
        source, target = scratch / student / assignment, course_submitted / student / assignment
        if any(p.is_symlink() for p in (course_submitted, course_submitted / student, target)):
            notes.append(f"{terminal(str(target))} is a symbolic link: the zip's notebook was graded, not kept there")
            continue
        if target.exists():
            if _same(target, source):
                continue
            aside = course_submitted.parent / "submitted-replaced" / stamp / student / assignment
            aside.parent.mkdir(parents=True, exist_ok=True)
            target.rename(aside)
            notes.append(f"{terminal(student)}/{terminal(assignment)}: the earlier submission was moved to {aside}")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(source, target)
    return notes
