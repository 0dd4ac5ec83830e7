"""Does grading one submission score each test cell fairly and survive broken input?"""
import hashlib

import nbformat

from autograder.grading.grade_one import grade_notebook

from .conftest import submission_of


def write(tmp_path, nb):
    path = tmp_path / "answer.ipynb"
    nbformat.write(nb, path)
    return path


def test_correct_answer_gets_full_points(source, tmp_path):
    """Does a correct answer earn the source's 2 points?"""
    result = grade_notebook(write(tmp_path, submission_of(source, "def f():\n    return 1")), source, "s", "a")
    assert (result.status, result.score, result.max_score) == ("graded", 2, 2)


def test_wrong_answer_fails_with_the_message_only(source, tmp_path):
    """Does a wrong answer score 0 with the hidden test's message but not its source?"""
    result = grade_notebook(write(tmp_path, submission_of(source, "def f():\n    return 2")), source, "s", "a")
    assert result.score == 0
    assert result.questions[0].message == "AssertionError: f() should be 1"


def test_warnings_on_stderr_do_not_cost_points(source, tmp_path):
    """Is a correct answer that prints warnings on stderr still given full points?"""
    answer = "import sys, warnings\ndef f():\n    warnings.warn('noise')\n    print('x', file=sys.stderr)\n    return 1"
    result = grade_notebook(write(tmp_path, submission_of(source, answer)), source, "s", "a")
    assert result.score == 2


def test_timeout_is_reported_and_scores_zero(source, tmp_path):
    """Does an endless loop in the tested function end with a timeout status and 0 points?"""
    answer = "def f():\n    while True:\n        pass"
    result = grade_notebook(write(tmp_path, submission_of(source, answer)), source, "s", "a", cell_timeout=3)
    assert result.status == "timeout in q1_check" and result.score == 0


def test_unreadable_file_gets_a_status(source, tmp_path):
    """Is truncated JSON reported as unreadable, with 0 of 2 points?"""
    path = tmp_path / "answer.ipynb"
    path.write_text('{"cells": [', encoding="utf-8")
    result = grade_notebook(path, source, "s", "a")
    assert result.status.startswith("unreadable") and (result.score, result.max_score) == (0, 2)


def test_missing_notebook_gets_a_status(source):
    """Is an empty folder (no notebook) reported as such?"""
    assert grade_notebook(None, source, "s", "a").status == "no notebook"


def test_submission_file_is_never_modified(source, tmp_path):
    """Is the submitted file byte-for-byte unchanged after grading?"""
    path = write(tmp_path, submission_of(source, "def f():\n    open('x.txt', 'w').write('hi')\n    return 1"))
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    grade_notebook(path, source, "s", "a")
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["answer.ipynb"], "files go to a temp folder"
