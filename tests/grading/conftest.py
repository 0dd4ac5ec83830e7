"""Shared pieces of the grading tests: a tiny nbgrader source notebook (one answer, one test cell
worth 2 points, whose checks use a REFERENCE region and a hidden test) and the grading sandbox.

Tests that run submissions need bubblewrap. Where it cannot run (``sandbox_problem()`` says why)
they are skipped with that reason, unless ``COURSE_REQUIRE_SANDBOX`` is set (CI sets it): then
they fail, so a machine that lost its sandbox cannot pass the suite by skipping it.
"""

import os

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from autograder.grading.judge.assemble import visible_source
from autograder.grading.judge.grade_one import solution_records
from autograder.grading.sandbox.container import Sandbox, sandbox_problem
from autograder.grading.sandbox.limits import Limits

# The test cell: the reference is computed in a REFERENCE region (withheld from the learner's
# process when graded), the visible check runs in the learner's notebook, the hidden one only
# when graded; all three use the course's checks, so each leaves a record the grader judges.
TEST_CELL = (
    "### BEGIN REFERENCE\n"
    "def expected_f():\n"
    "    return 1\n"
    "### END REFERENCE\n"
    'check.value(f() is not None, True, "f() is not None", hint="f returned None")\n'
    "### BEGIN HIDDEN TESTS\n"
    'check.value(f(), expected_f(), "f()", hint="f() should be 1", show_values=False)\n'
    "### END HIDDEN TESTS"
)


def nbgrader_meta(grade_id, grade=False, solution=False, locked=False, points=None):
    meta = {
        "grade": grade,
        "solution": solution,
        "locked": locked,
        "schema_version": 3,
        "task": False,
        "grade_id": grade_id,
    }
    if points is not None:
        meta["points"] = points
    return {"nbgrader": meta}


def tiny_source():
    """The tiny nbgrader source notebook (the ``source`` fixture), for fixtures of wider scope."""
    nb = new_notebook(
        cells=[
            new_code_cell("import math\n\nfrom autograder import check", metadata=nbgrader_meta("setup", locked=True)),
            new_markdown_cell("Return 1.", metadata=nbgrader_meta("q1_text", locked=True)),
            new_code_cell(
                "def f():\n    ### BEGIN SOLUTION\n    return 1\n    ### END SOLUTION",
                metadata=nbgrader_meta("q1_answer", solution=True),
            ),
            new_code_cell(TEST_CELL, metadata=nbgrader_meta("q1_check", grade=True, locked=True, points=2)),
        ]
    )
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return nb


@pytest.fixture
def source():
    return tiny_source()


def submission_of(source, answer):
    """The release of `source` with the answer cell's text replaced by `answer`."""
    nb = nbformat.reads(nbformat.writes(source), as_version=4)
    nb.cells[2].source = answer
    nb.cells[3].source = visible_source(nb.cells[3].source)  # hidden tests stripped, as in the release
    return nb


def require_sandbox() -> None:
    """Skip the calling test where bubblewrap cannot run here (with the reason), or fail it when
    ``COURSE_REQUIRE_SANDBOX`` is set."""
    problem = sandbox_problem()
    if problem is None:
        return
    if os.environ.get("COURSE_REQUIRE_SANDBOX"):
        pytest.fail(f"COURSE_REQUIRE_SANDBOX is set but the grading sandbox cannot run: {problem}")
    pytest.skip(f"the grading sandbox cannot run here: {problem}")


@pytest.fixture(scope="session")
def sandbox_available():
    """Skip (or, with COURSE_REQUIRE_SANDBOX, fail) tests that run submissions where bubblewrap
    cannot run. Use it directly, or through the ``sandbox`` fixture."""
    require_sandbox()


needs_sandbox = pytest.mark.usefixtures("sandbox_available")


@pytest.fixture(scope="module")
def sandbox(sandbox_available):
    """One warm sandbox (default ``Limits``) per test module, as one grading thread has; closed
    (everything in it killed) after the module."""
    with Sandbox(Limits()) as box:
        yield box


@pytest.fixture
def expected(source, sandbox):
    """The records of the tiny source's solution run: what a learner's checks are judged against."""
    return solution_records(source, sandbox, Limits())
