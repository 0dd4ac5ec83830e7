"""The demo class: submissions built from the release, the solutions and typical mistakes.

Students: ``correct`` (every answer is the solution's), ``blank`` (every answer is the release's
stub, ``raise NotImplementedError()``) and, per assignment, one student per entry of
:data:`mistakes.MISTAKES` whose answers are the solution's except the mistaken ones. Every answer
cell is set from ``solutions/`` (nbgrader's own ``ClearSolutions`` makes the stubs), so answers a
learner wrote into ``exercises/`` never reach the demo class; built fresh each time, so it never
goes stale.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path

import nbformat

from ...lessons import COURSE_ROOT
from ..judge.assemble import grade_id, is_answer, is_test
from ..judge.stubs import release_answers
from ..mistakes import MISTAKES
from .batch import load_sources

__all__ = ["solution_answer", "release_answers", "build_demo_class"]

_MARKER = re.compile(r"^[ \t]*### (BEGIN|END) SOLUTION[^\n]*\n?", re.MULTILINE)


def solution_answer(source_cell_text: str) -> str:
    """An answer cell's text as a correct learner would submit it: the source with the
    ``### BEGIN/END SOLUTION`` marker lines removed."""
    return _MARKER.sub("", source_cell_text)


def _submission(release: nbformat.NotebookNode, answers: dict[str, str]) -> nbformat.NotebookNode:
    nb = copy.deepcopy(release)
    for cell in nb.cells:
        if is_answer(cell) and grade_id(cell) in answers:
            cell.source = answers[grade_id(cell)]
        if cell.cell_type == "code":  # outputs a learner's run left in exercises/
            cell.outputs, cell.execution_count = [], None
    return nb


def build_demo_class(target: Path, root: Path = COURSE_ROOT) -> dict[tuple[str, str], dict]:
    """Write ``target/<student>/<assignment>/<notebook>.ipynb`` for the demo class.

    Returns:
        ``{(student_id, assignment_id): {"fails": {test grade_id: phrase}}}`` — what each
        submission is expected to fail (empty for ``correct``; every test for ``blank``).
    """
    expected = {}
    for assignment, (name, source) in load_sources(root / "solutions").items():
        release = nbformat.read(root / "exercises" / assignment / name, as_version=4)
        solution = {grade_id(c): solution_answer(c.source) for c in source.cells if is_answer(c)}
        tests = [grade_id(c) for c in source.cells if is_test(c)]
        students = {"correct": ({}, {}), "blank": (release_answers(source), dict.fromkeys(tests, ""))}
        students.update({s: (m["answers"], m["fails"]) for s, m in MISTAKES.get(assignment, {}).items()})
        for student, (answers, fails) in students.items():
            nb = _submission(release, {**solution, **answers})
            path = target / student / assignment / name
            path.parent.mkdir(parents=True, exist_ok=True)
            nbformat.write(nb, path)
            expected[(student, assignment)] = {"fails": fails}
    return expected
