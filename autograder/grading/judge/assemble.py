"""Build the notebook that is actually graded: the instructor's source, with the learner's answers.

The source notebook (``solutions/<assignment>/<name>.ipynb``) decides everything that is not an
answer: test cells (hidden tests included), locked cells, their order and their points. From the
submission we take only the source of answer cells (nbgrader ``solution`` cells, matched by
``grade_id``) and any extra code cells the learner added, kept after the cell they followed. So a
test cell deleted, edited or moved by the learner is graded as the instructor wrote it, and
points written into the submission never count.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass

import nbformat

__all__ = [
    "Question",
    "questions",
    "assemble",
    "grade_id",
    "is_answer",
    "is_test",
    "is_read_only",
    "withheld_here",
    "visible_source",
    "HIDDEN_TESTS",
]

# The markers nbgrader's ClearHiddenTests uses; everything between them is the instructor's.
HIDDEN_TESTS = re.compile(
    r"^[ \t]*### BEGIN HIDDEN TESTS.*?^[ \t]*### END HIDDEN TESTS[^\n]*\n?", re.MULTILINE | re.DOTALL
)


def _nbgrader(cell) -> dict:
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return meta if isinstance(meta, dict) else {}


def grade_id(cell) -> str | None:
    """The cell's nbgrader ``grade_id``, or None."""
    value = _nbgrader(cell).get("grade_id")
    return value if isinstance(value, str) else None


def is_answer(cell) -> bool:
    """True for an nbgrader solution (answer) code cell."""
    return cell.get("cell_type") == "code" and bool(_nbgrader(cell).get("solution"))


def is_test(cell) -> bool:
    """True for an nbgrader autograded test cell (grade and not solution, code)."""
    meta = _nbgrader(cell)
    return cell.get("cell_type") == "code" and bool(meta.get("grade")) and not meta.get("solution")


def is_read_only(cell) -> bool:
    """True for a locked code cell that is neither an answer nor a test (nbgrader's read-only cell):
    the set-up cell, given code, and the collapsed cell right above a test cell where an exercise
    keeps that question's check helpers and references (``solutions/AUTHORING.md``)."""
    meta = _nbgrader(cell)
    locked = bool(meta.get("locked")) and not meta.get("grade") and not meta.get("solution")
    return cell.get("cell_type") == "code" and locked


def withheld_here(cell) -> bool:
    """True for a cell whose REFERENCE regions the class grader withholds: a test cell or a
    read-only cell. Both come from the source (``assemble``), never from the submission."""
    return is_test(cell) or is_read_only(cell)


@dataclass(frozen=True)
class Question:
    """A graded test cell of the source: its ``grade_id`` and ``points`` (float)."""

    grade_id: str
    points: float


def questions(source: nbformat.NotebookNode) -> list[Question]:
    """The test cells of a source notebook, in order, with the points the source gives them."""
    return [Question(grade_id(c), float(_nbgrader(c).get("points", 0))) for c in source.cells if is_test(c)]


def visible_source(text: str) -> str:
    """A cell's text as the learner sees it: without its hidden-test regions."""
    return HIDDEN_TESTS.sub("", text)


def _learner_cells(submission: nbformat.NotebookNode, source: nbformat.NotebookNode):
    """Answer sources by grade_id (several cells with one grade_id, as when a learner splits or
    duplicates an answer cell, are joined in order) and the learner's other code cells, keyed by
    the known cell they follow (None: before any). A cell is known by its grade_id or, when its
    nbgrader metadata was stripped, by having exactly the text of a cell of the release."""
    known = {grade_id(c) for c in source.cells if grade_id(c)}
    by_text = {
        visible_source(c.source).strip(): grade_id(c)
        for c in source.cells
        if grade_id(c) and not is_answer(c) and c.source.strip()
    }
    answers: dict[str, list[str]] = {}
    extras: dict[str | None, list[str]] = {}
    after = None
    for cell in submission.get("cells", []):
        text = cell.get("source", "")
        text = "".join(text) if isinstance(text, list) else str(text)
        gid = grade_id(cell) if grade_id(cell) in known else by_text.get(text.strip())
        if gid is not None:
            after = gid
            if is_answer(cell):
                answers.setdefault(gid, []).append(text)
        elif cell.get("cell_type") == "code" and text.strip():
            extras.setdefault(after, []).append(text)
    return {gid: "\n\n".join(parts) for gid, parts in answers.items()}, extras


def assemble(source: nbformat.NotebookNode, submission: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Return a new notebook to execute: the source's cells (hidden tests kept), answer cells
    replaced by the learner's answers (a missing answer becomes an empty comment, so an answer the
    learner moved into a cell of their own still counts), the learner's extra code cells where
    they were. Outputs are cleared. Neither argument is modified."""
    answers, extras = _learner_cells(submission, source)
    graded = copy.deepcopy(source)
    cells = [nbformat.v4.new_code_cell(s) for s in extras.get(None, [])]
    for cell in graded.cells:
        gid = grade_id(cell)
        if is_answer(cell):
            cell.source = answers.get(gid, "# (no answer cell with this grade_id in the submission)")
        cells.append(cell)
        cells.extend(nbformat.v4.new_code_cell(s) for s in extras.get(gid, []))
    for cell in cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    graded.cells = cells
    return graded
