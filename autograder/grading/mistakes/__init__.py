"""Typical mistakes of each question, one module per assignment (``<assignment_id>.py``), used to
build the demo class (``python -m autograder grade`` with no folder) and by the course tests.

Each module defines ``MISTAKES = {student_id: {"answers": {...}, "fails": {...}}}``:
``answers`` maps the grade_id of an answer cell to the full source of that cell as the student
wrote it (every other answer is the solution's); ``fails`` maps the grade_id of each test cell that
must fail to a phrase its failure message contains (every other test cell must pass). Student ids
are lowercase words with dashes, starting with the exercise (``ex01-q2-sign``).
"""

import importlib
import pkgutil

MISTAKES: dict[str, dict] = {
    module.name: importlib.import_module(f"{__name__}.{module.name}").MISTAKES
    for module in pkgutil.iter_modules(__path__)
}
