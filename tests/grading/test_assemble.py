"""Is the graded notebook the instructor's, with only the learner's answers taken?"""
from nbformat.v4 import new_code_cell, new_markdown_cell

from autograder.grading.assemble import assemble, questions

from .conftest import submission_of


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
        "def f():", "def g():", "assert f() is not None, 'f returned None'"]


def test_missing_answer_cell_keeps_the_stub(source):
    """If the answer cell is gone, does the question fail as unanswered?"""
    sub = submission_of(source, "")
    del sub.cells[2]
    assert "NotImplementedError" in assemble(source, sub).cells[2].source


def test_inputs_are_not_modified(source):
    """Are neither the source nor the submission changed by assembling?"""
    sub = submission_of(source, "def f():\n    return 1")
    before = (source.cells[3].source, len(sub.cells), sub.cells[3].source)
    assemble(source, sub)
    assert before == (source.cells[3].source, len(sub.cells), sub.cells[3].source)
