"""Is the graded notebook the instructor's, with only the learner's answers taken?"""

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell

from autograder.grading.judge.assemble import assemble, questions

from ..conftest import submission_of


def test_answers_are_taken_and_hidden_tests_restored(source):
    """Does the graded notebook hold the learner's answer and the source's hidden tests?"""
    graded = assemble(source, submission_of(source, "def f():\n    return 2"))
    assert graded.cells[2].source == "def f():\n    return 2"
    assert "BEGIN HIDDEN TESTS" in graded.cells[3].source


def test_deleted_test_cell_is_restored(source):
    """If the learner deletes the test cell, is it graded anyway?"""
    sub = submission_of(source, "def f():\n    return 1")
    del sub.cells[3]
    assert [c.source for c in assemble(source, sub).cells][3] == source.cells[3].source


def test_edited_test_cell_and_points_are_ignored(source):
    """Do a learner's edits to a test cell and its points have no effect?"""
    sub = submission_of(source, "def f():\n    return 1")
    sub.cells[3].source = "pass"
    sub.cells[3].metadata["nbgrader"]["points"] = 100
    graded = assemble(source, sub)
    assert graded.cells[3].source == source.cells[3].source
    assert [(q.grade_id, q.points) for q in questions(graded)] == [("q1_check", 2.0)]


def test_extra_learner_cells_stay_after_the_cell_they_followed(source):
    """Does a helper cell the learner added after the answer run between answer and test?"""
    sub = submission_of(source, "def f():\n    return g()")
    sub.cells.insert(3, new_code_cell("def g():\n    return 1"))
    sub.cells.append(new_markdown_cell("my notes"))
    graded = assemble(source, sub)
    assert [c.source.splitlines()[0] for c in graded.cells][2:5] == [
        "def f():",
        "def g():",
        source.cells[3].source.splitlines()[0],
    ]


def test_missing_answer_cell_leaves_a_comment(source):
    """If the answer cell is gone, is it replaced by a comment (no stub that could overwrite an
    answer the learner wrote in a cell of their own)?"""
    sub = submission_of(source, "")
    del sub.cells[2]
    assert assemble(source, sub).cells[2].source.startswith("# (no answer cell")


def test_split_or_duplicated_answer_cells_are_joined(source):
    """Are two cells carrying the answer's grade_id run together, in order?"""
    sub = submission_of(source, "def g():\n    return 1")
    sub.cells.insert(3, nbformat.from_dict(dict(sub.cells[2], source="def f():\n    return g()")))
    assert assemble(source, sub).cells[2].source == "def g():\n    return 1\n\ndef f():\n    return g()"


def test_stripped_metadata_is_recognised_by_text(source):
    """With all nbgrader metadata stripped, does the answer still run before the test?"""
    sub = submission_of(source, "def f():\n    return 1")
    for cell in sub.cells:
        cell.metadata = {}
    graded = assemble(source, sub)
    order = [c.source.splitlines()[0] for c in graded.cells]
    assert order.index("def f():") < order.index(source.cells[3].source.splitlines()[0])
    assert order.index("import math") < order.index("def f():")


def test_renamed_grade_id_still_runs_as_learner_code(source):
    """Does an answer cell whose grade_id was renamed still run, after the cell it followed?"""
    sub = submission_of(source, "def f():\n    return 1")
    sub.cells[2].metadata["nbgrader"]["grade_id"] = "renamed"
    sources = [c.source for c in assemble(source, sub).cells]
    assert sources.index("def f():\n    return 1") < sources.index(source.cells[3].source)


def test_inputs_are_not_modified(source):
    """Are neither the source nor the submission changed by assembling?"""
    sub = submission_of(source, "def f():\n    return 1")
    before = (source.cells[3].source, len(sub.cells), sub.cells[3].source)
    assemble(source, sub)
    assert before == (source.cells[3].source, len(sub.cells), sub.cells[3].source)
