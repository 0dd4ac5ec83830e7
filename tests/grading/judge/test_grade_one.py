"""Does grading one submission score each test cell fairly and survive broken input?"""

import hashlib
import os
import re
import stat
import time

import nbformat
import pytest
import torch

from autograder.check.checked import Checked
from autograder.grading import status
from autograder.grading.judge.grade_one import MAX_MESSAGE, SolutionFails, grade_notebook, solution_records
from autograder.grading.judge.verdict import HIDDEN_WRONG, verdict
from autograder.grading.sandbox.limits import Limits

from ..conftest import submission_of


def write(tmp_path, nb):
    path = tmp_path / "answer.ipynb"
    nbformat.write(nb, path)
    return path


def graded(source, expected, sandbox, path, limits=Limits()):
    return grade_notebook(path, source, expected, "s", "a", sandbox, limits)


def test_solution_records_hold_every_check_of_the_test_cell(source, expected):
    """Does the solution's run give the test cell's records, the hidden check's with the
    reference computed (nothing withheld where the solution runs)?"""
    assert list(expected) == ["q1_check"]
    assert [(r.name, r.kind, r.received, r.expected) for r in expected["q1_check"]] == [
        ("f() is not None", "value", True, True),
        ("f()", "value", 1, 1),
    ]


def test_a_solution_that_fails_its_own_tests_is_refused(source, sandbox):
    """Is a source whose solution fails its test cell refused with SolutionFails?"""
    source.cells[2].source = "def f():\n    return 2"
    with pytest.raises(SolutionFails, match="q1_check"):
        solution_records(source, sandbox, Limits())


def test_correct_answer_gets_full_points(source, expected, sandbox, tmp_path):
    """Does a correct answer earn the source's 2 points?"""
    result = graded(source, expected, sandbox, write(tmp_path, submission_of(source, "def f():\n    return 1")))
    assert (result.status, result.score, result.max_score) == ("graded", 2, 2)
    assert result.questions[0].message == ""


def test_wrong_answer_fails_with_the_message_only(source, expected, sandbox, tmp_path):
    """Does a wrong answer score 0 with the hidden check's message (judged by the grader, values
    hidden as the hidden test asks) but not its source?"""
    result = graded(source, expected, sandbox, write(tmp_path, submission_of(source, "def f():\n    return 2")))
    assert result.score == 0
    assert result.questions[0].message == "f() is wrong. f() should be 1 (a hidden test: its inputs are not shown)"


def test_a_hidden_checks_message_says_nothing_of_its_inputs(source, sandbox, tmp_path):
    """Is a failing hidden tensor check reported without what its inputs make of the diagnosis (a
    factor, a shape, the numbers of a cause: "N = 7 rows here"), the rest of its cause kept?"""
    source.cells[3].source = source.cells[3].source.replace(
        "### END HIDDEN TESTS",
        "import torch\n"
        "check.tensor(torch.full((7,), float(f())), torch.ones(7), 'f() for each row',"
        " show_values=False, causes={2.0: 'f() is 2x too large (N = 7 rows here)'})\n"
        "### END HIDDEN TESTS",
    )
    expected = solution_records(source, sandbox, Limits())
    assert [r.options.get("hidden", False) for r in expected["q1_check"]] == [False, True, True]
    result = graded(source, expected, sandbox, write(tmp_path, submission_of(source, "def f():\n    return 1")))
    assert result.score == 2
    message = verdict(
        [
            Checked("f() is not None", "value", True, None, {}),
            Checked("f()", "value", 1, None, {}),
            Checked("f() for each row", "tensor", torch.full((7,), 2.0), None, {}),
        ],
        expected["q1_check"],
    )
    assert message.startswith(HIDDEN_WRONG.format(name="f() for each row")) and "too large" in message
    assert not re.search(r"\d", message), message  # no other run of the check tells which numbers are constants


def test_visible_check_fails_in_the_learners_process(source, expected, sandbox, tmp_path):
    """Does a check whose reference is not withheld fail in the cell itself, with its message (read
    like a verdict of the grader's: no "CheckFailed:" in front)?"""
    result = graded(source, expected, sandbox, write(tmp_path, submission_of(source, "def f():\n    return None")))
    assert result.score == 0
    assert result.questions[0].message.startswith("f() is not None is wrong")
    assert "f returned None" in result.questions[0].message


def test_hidden_check_is_deferred_to_the_grader(source, expected, sandbox, tmp_path):
    """In the graded notebook, does the test cell show the visible check's OK and say the hidden
    check (whose reference is withheld from the learner's process) is checked when graded?"""
    result = graded(source, expected, sandbox, write(tmp_path, submission_of(source, "def f():\n    return 1")))
    (output,) = result.notebook.cells[3].outputs
    assert output["text"] == "OK f() is not None\nf(): checked when graded\n"


def test_warnings_on_stderr_do_not_cost_points(source, expected, sandbox, tmp_path):
    """Is a correct answer that prints warnings on stderr still given full points?"""
    answer = "import sys, warnings\ndef f():\n    warnings.warn('noise')\n    print('x', file=sys.stderr)\n    return 1"
    result = graded(source, expected, sandbox, write(tmp_path, submission_of(source, answer)))
    assert result.score == 2


def test_timeout_is_reported_and_scores_zero(source, expected, sandbox, tmp_path):
    """Does an endless loop in the tested function end with a timeout status and 0 points?"""
    answer = "def f():\n    while True:\n        pass"
    result = graded(source, expected, sandbox, write(tmp_path, submission_of(source, answer)), Limits(cell_timeout=3))
    assert result.status == "timeout in q1_check" and result.score == 0


def test_unreadable_file_gets_a_status(source, tmp_path):
    """Is truncated JSON reported as unreadable, with 0 of 2 points (nothing run)?"""
    path = tmp_path / "answer.ipynb"
    path.write_text('{"cells": [', encoding="utf-8")
    result = grade_notebook(path, source, {}, "s", "a", None, Limits())
    assert result.status.startswith("unreadable") and (result.score, result.max_score) == (0, 2)


def test_missing_notebook_gets_a_status(source):
    """Is an empty folder (no notebook) reported as such?"""
    assert grade_notebook(None, source, {}, "s", "a", None, Limits()).status == "no notebook"


def test_submission_file_is_never_modified(source, expected, sandbox, tmp_path):
    """Is the submitted file byte-for-byte unchanged after grading?"""
    path = write(tmp_path, submission_of(source, "def f():\n    open('x.txt', 'w').write('hi')\n    return 1"))
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    result = graded(source, expected, sandbox, path)
    assert result.score == 2
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["answer.ipynb"], "files go to a temp folder"


def test_a_forged_check_failure_that_reads_like_a_pass_still_scores_zero(source, expected, sandbox, tmp_path):
    """A failed check's message now stands without "CheckFailed:" in front: can an answer that makes
    the check cell raise its own CheckFailed, worded like a pass (or blank), earn the points?"""
    for text in ("All checks passed.", " ", ""):
        answer = (
            "from autograder import check\n"
            "class CheckFailed(Exception):\n    pass\n"
            f"def _forged(*args, **kwargs):\n    raise CheckFailed({text!r})\n"
            "check.value = _forged\n"
            "def f():\n    return 2"
        )
        result = graded(source, expected, sandbox, write(tmp_path, submission_of(source, answer)))
        assert result.score == 0 and result.questions[0].message, text


def _fifo(path):
    os.mkfifo(path)


def _sparse(path):
    with open(path, "wb") as f:
        f.truncate(2**30)  # 1 GiB of holes: costs no disk, would cost the grader 1 GiB read whole


def _device(path):
    os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(1, 5))  # a /dev/zero of its own (root only)


@pytest.mark.parametrize(
    "make,expected",
    [(_fifo, re.escape(status.NOT_A_FILE)), (_sparse, re.escape(status.TOO_LARGE)), (_device, "refused|unreadable")],
)
def test_a_notebook_that_is_no_regular_file_is_refused_unread(source, tmp_path, make, expected):
    """Is a "notebook" that is a FIFO (a read would block forever), a device or a sparse 1 GiB
    file refused at once, with 0 points, without being read?"""
    path = tmp_path / "answer.ipynb"
    try:
        make(path)
    except PermissionError:
        pytest.skip("making a device needs root")
    started = time.monotonic()
    result = grade_notebook(path, source, {}, "s", "a", None, Limits())
    assert re.match(expected, result.status) and (result.score, result.max_score) == (0, 2), result.status
    assert time.monotonic() - started < 30  # a read of the device would never end; a busy machine takes seconds


def test_a_huge_failure_message_is_cut(source, expected, sandbox, tmp_path):
    """Is a question's message that quotes a huge text of the learner's (an exception's message)
    cut to MAX_MESSAGE characters, so that the page and the gradebook stay small?"""
    answer = "def f():\n    raise ValueError('[' * 1_000_000)"
    result = graded(source, expected, sandbox, write(tmp_path, submission_of(source, answer)))
    assert result.score == 0 and len(result.questions[0].message) <= MAX_MESSAGE + 20
