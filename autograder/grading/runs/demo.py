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

__all__ = ["solution_answer", "release_answers", "demo_answers", "with_answers", "build_demo_class"]

_MARKER = re.compile(r"^[ \t]*### (BEGIN|END) SOLUTION[^\n]*\n?", re.MULTILINE)


def solution_answer(source_cell_text: str) -> str:
    """An answer cell's text as a correct learner would submit it: the source with the
    ``### BEGIN/END SOLUTION`` marker lines removed."""
    return _MARKER.sub("", source_cell_text)


def with_answers(release: nbformat.NotebookNode, answers: dict[str, str]) -> nbformat.NotebookNode:
    """A copy of ``release`` (the release's notebook, or a learner's copy of it) with ``answers``
    (``{answer cell's grade_id: source}``) written into its answer cells and every code cell's
    outputs cleared."""
    nb = copy.deepcopy(release)
    for cell in nb.cells:
        if is_answer(cell) and grade_id(cell) in answers:
            cell.source = answers[grade_id(cell)]
        if cell.cell_type == "code":  # outputs a learner's run left in exercises/
            cell.outputs, cell.execution_count = [], None
    return nb


def _students(source: nbformat.NotebookNode, assignment: str) -> dict[str, tuple[dict, dict]]:
    """``{student: (answers, fails)}`` of the demo class for one assignment: answers by answer
    cell's grade_id (the solution's where a student has none of their own), fails by test cell."""
    solution = {grade_id(c): solution_answer(c.source) for c in source.cells if is_answer(c)}
    tests = [grade_id(c) for c in source.cells if is_test(c)]
    students = {"correct": ({}, {}), "blank": (release_answers(source), dict.fromkeys(tests, ""))}
    students.update({s: (m["answers"], m["fails"]) for s, m in MISTAKES.get(assignment, {}).items()})
    return {student: ({**solution, **answers}, fails) for student, (answers, fails) in students.items()}


def demo_answers(assignment: str, student: str, root: Path = COURSE_ROOT) -> dict[str, str]:
    """The answers ``{answer cell's grade_id: source}`` that the demo class's ``student``
    (``correct``, ``blank`` or a typical mistake's name) gives for ``assignment``.

    Raises:
        KeyError: no such assignment in ``root/solutions``, or no such student for it (the
            message names the ones there are).
    """
    sources = load_sources(root / "solutions")
    if assignment not in sources:
        raise KeyError(f"no assignment {assignment!r} in {root / 'solutions'}: one of {', '.join(sorted(sources))}")
    students = _students(sources[assignment][1], assignment)
    if student not in students:
        raise KeyError(f"the demo class has no {student!r} for {assignment}: one of {', '.join(students)}")
    return students[student][0]


def build_demo_class(target: Path, root: Path = COURSE_ROOT) -> dict[tuple[str, str], dict]:
    """Write ``target/<student>/<assignment>/<notebook>.ipynb`` for the demo class.

    Returns:
        ``{(student_id, assignment_id): {"fails": {test grade_id: phrase}}}`` — what each
        submission is expected to fail (empty for ``correct``; every test for ``blank``).
    """
    expected = {}
    for assignment, (name, source) in load_sources(root / "solutions").items():
        release = nbformat.read(root / "exercises" / assignment / name, as_version=4)
        for student, (answers, fails) in _students(source, assignment).items():
            path = target / student / assignment / name
            path.parent.mkdir(parents=True, exist_ok=True)
            nbformat.write(with_answers(release, answers), path)
            expected[(student, assignment)] = {"fails": fails}
    return expected
