"""Learners' names in nbgrader's gradebook (``Student.first_name`` and ``last_name``), which
formgrader, ``canvas.csv`` and ``summary.csv`` show.

Names come from the instructor's roster (``grade --from-zip ZIP --roster CSV``, read as data by
``intake.lms_zip.read_roster``) or from ``nbgrader db student add --first-name --last-name``. A name
already in the gradebook is never replaced (the instructor may have corrected it there).
"""

from __future__ import annotations

from .gradebook import Store

__all__ = ["name_students"]


def name_students(db_url: str, names: dict[str, tuple[str, str]]) -> list[str]:
    """Write ``{student id: (first, last)}`` into the gradebook at ``db_url`` for each student it
    holds without a name. Students it does not hold are not added (a roster lists the whole class;
    the gradebook, who was graded).

    Returns:
        The ids named, sorted.
    """
    named = []
    with Store(db_url) as store:
        for student in store.gb.students:
            first, last = names.get(student.id, ("", ""))
            if (first or last) and not (student.first_name or student.last_name):
                student.first_name, student.last_name = first, last  # "", not None: formgrader shows None as 'None'
                named.append(student.id)
        store.gb.db.commit()
    return sorted(named)
