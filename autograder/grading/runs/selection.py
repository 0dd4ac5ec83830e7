"""Which submissions a grade run grades: those of ``--student``/``--assignment`` (and the shard)
among the folders of SUBMITTED, or a refusal that names what was asked and what is there."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from .shards import in_shard

__all__ = ["NothingToGrade", "selected"]


class NothingToGrade(LookupError):
    """No submission matches the run: the message names what was asked and what SUBMITTED holds.
    Raised before anything is written, so grades.csv, the report and the pages stay as they were."""


def _listed(names: Sequence[str], most: int = 8) -> str:
    shown = ", ".join(names[:most])
    return shown + (f" and {len(names) - most} more" if len(names) > most else "")


def selected(found: list, submitted: Path, students=None, assignments=None, shard=None) -> list:
    """The submissions of ``found`` (``batch.Submission``s of ``submitted``) that the run grades:
    of ``students`` and ``assignments`` (None: all) and in ``shard`` (K, N) (None: all).

    Raises:
        NothingToGrade: none is of the students and assignments asked (a shard that holds none
            of a class that has some is not an error: it grades nothing).
    """
    wanted = [
        s
        for s in found
        if (not students or s.student_id in students) and (not assignments or s.assignment_id in assignments)
    ]
    if not wanted:
        raise NothingToGrade(_nothing(found, submitted, students, assignments))
    return [s for s in wanted if in_shard(s.student_id, s.assignment_id, shard)]


def _nothing(found: list, submitted: Path, students, assignments) -> str:
    if not found:
        return (
            f"nothing to grade: {submitted}/ holds no submission "
            f"(expected {submitted}/<student>/<assignment>/<notebook>.ipynb)"
        )
    who = f" of {' or '.join(students)}" if students else ""
    what = f" for {' or '.join(assignments)}" if assignments else ""
    there = _listed([f"{s.student_id}/{s.assignment_id}" for s in found])
    return f"nothing to grade: no submission{who}{what} in {submitted}/ (it holds {there}); nothing was changed"
