"""The release's stubs: what an answer cell holds before a learner writes anything, and which
questions a submission left as they were released (cause key ``not_answered``)."""

from __future__ import annotations

import copy

import nbformat

from .assemble import grade_id, is_answer, is_test

__all__ = ["release_answers", "unanswered"]


def release_answers(source: nbformat.NotebookNode) -> dict[str, str]:
    """``{answer grade_id: text}`` of an unanswered release: each answer cell of the nbgrader
    ``source`` with its solution replaced by nbgrader's stub (as ``generate_assignment`` does)."""
    from nbgrader.preprocessors import ClearSolutions  # nbgrader's own stubs; imported when needed

    cleared, _ = ClearSolutions().preprocess(copy.deepcopy(source), {"language": "python"})
    return {grade_id(c): c.source for c in cleared.cells if is_answer(c)}


def unanswered(graded: nbformat.NotebookNode, stubs: dict[str, str]) -> set[str]:
    """The grade_ids of the test cells of ``graded`` (the notebook as assembled for grading) whose
    answer cells, those since the previous test cell, all still hold the release's ``stubs``
    (:func:`release_answers`). A test cell with no answer cell of its own is never unanswered."""
    found, answers = set(), []
    for cell in graded.cells:
        if is_answer(cell):
            answers.append(cell.source.strip() == stubs.get(grade_id(cell), "\0").strip())
        elif is_test(cell):
            if answers and all(answers):
                found.add(grade_id(cell))
            answers = []
    return found
