"""Is a question passed only on positive evidence: every check of its test cell ran and was judged
right? Each way a test cell can end "without a failure" (an exception with no name and no message,
``SystemExit``, ``KeyboardInterrupt``, ``GeneratorExit``, an exception whose ``__str__`` or
``__repr__`` raises, a check patched to return early, a record the cell does not make, an error
hidden from the grader, a cell that never ran) is graded through the command line beside an honest
and a blank classmate: by a class run (``grade``) and by ``grade-one`` in both results formats, in
two assignments whose test cells call the learner's ``f`` directly (``ex01``) and through
``check.call`` (``ex02``)."""

from __future__ import annotations

import csv
import html
import json
import os
import subprocess
import sys

import nbformat
import pytest

from autograder.check.checked import Checked
from autograder.check.raised import UNNAMED, UNREADABLE, described, shown_name
from autograder.grading.judge import points
from autograder.grading.judge.points import question_points
from autograder.grading.sandbox.runner import CellRun

from ..conftest import TEST_CELL, submission_of, tiny_source

HONEST, BLANK = "def f():\n    return 1", "def f():\n    raise NotImplementedError()"

# Each is an answer cell; none answers the question (f never returns 1).
ATTACKS = {
    "unnamed-empty": 'E = type("", (BaseException,), {"__str__": lambda self: ""})\ndef f():\n    raise E()',
    "unnamed-exception": 'E = type("", (Exception,), {"__str__": lambda self: ""})\ndef f():\n    raise E()',
    "blank-name": 'E = type("   ", (BaseException,), {"__str__": lambda self: " "})\ndef f():\n    raise E()',
    "system-exit": "def f():\n    raise SystemExit()",
    "system-exit-0": "import sys\ndef f():\n    sys.exit(0)",
    "keyboard-interrupt": "def f():\n    raise KeyboardInterrupt",
    "generator-exit": "def f():\n    raise GeneratorExit",
    "str-raises": (
        "class E(BaseException):\n    def __str__(self):\n        raise SystemExit('no')\n"
        "    def __repr__(self):\n        raise SystemExit('no')\ndef f():\n    raise E()"
    ),
    "name-raises": (
        "class Meta(type):\n    @property\n    def __name__(cls):\n        raise SystemExit('no')\n"
        "E = Meta('E', (BaseException,), {'__str__': lambda self: ''})\ndef f():\n    raise E()"
    ),
    "name-not-text": (
        "class Meta(type):\n    __name__ = property(lambda cls: 42)\n"
        "E = Meta('E', (BaseException,), {'__str__': lambda self: ''})\ndef f():\n    raise E()"
    ),
    "check-returns-early": (
        "from autograder import check\ncheck.value = lambda *args, **kwargs: None\ndef f():\n    return 2"
    ),
    "error-hidden": (
        "from IPython.core.interactiveshell import ExecutionResult\n"
        "ExecutionResult.error_in_exec = property(lambda self: None, lambda self, value: None)\n"
        "ExecutionResult.error_before_exec = property(lambda self: None, lambda self, value: None)\n"
        "def f():\n    raise ValueError('hidden')"
    ),
    "forged-first-record": (  # a right record reported before each of the checks' own (f returns 2)
        "from autograder import check\nfrom autograder.check.checked import Checked\n"
        "def f():\n"
        "    if check._hook is not None:\n"
        '        check._hook(Checked("f() is not None", "value", True, True, {}))\n'
        '        check._hook(Checked("f()", "value", 1, 1, {}))\n'
        "    return 2"
    ),
    "never-ran": "import os\ndef f():\n    os._exit(0)",
}
NOT_ALL_RAN, FOREIGN = "did not all run", "reported checks it does not make"
# What each attack's question says, in ex01 (the cell raised it) and ex02 (check.call turned it into a failure)
SAID = {
    "unnamed-empty": (UNNAMED, f"f raised {UNNAMED}"),
    "unnamed-exception": (UNNAMED, f"f raised {UNNAMED}"),
    "blank-name": (UNNAMED, f"f raised {UNNAMED}"),
    "system-exit": ("SystemExit", "f raised SystemExit"),
    "system-exit-0": ("SystemExit: 0", "f raised SystemExit: 0"),
    "keyboard-interrupt": ("KeyboardInterrupt", "f raised KeyboardInterrupt"),
    "generator-exit": ("GeneratorExit", "f raised GeneratorExit"),
    "str-raises": ("SystemExit: no", f"f raised E: {UNREADABLE}"),  # IPython met the SystemExit formatting it
    "name-raises": ("SystemExit: no", f"f raised {UNNAMED}"),
    "name-not-text": (UNNAMED, f"f raised {UNNAMED}"),
    "check-returns-early": (NOT_ALL_RAN, NOT_ALL_RAN),
    "error-hidden": (NOT_ALL_RAN, NOT_ALL_RAN),
    "forged-first-record": (FOREIGN, FOREIGN),
    "never-ran": ("stopped: crashed", "stopped: crashed"),
}
STUDENTS = {"honest": HONEST, "blank": BLANK, **{f"atk-{name}": answer for name, answer in ATTACKS.items()}}
# ex02: the same checks, the learner's function called through check.call
ASSIGNMENTS = {"ex01": TEST_CELL, "ex02": TEST_CELL.replace("(f()", "(check.call(f)")}


def _source(test_cell: str) -> nbformat.NotebookNode:
    source = tiny_source()
    source.cells[3].source = test_cell
    return source


def _cli(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "autograder", *args], capture_output=True, text=True, timeout=timeout, env=os.environ
    )


@pytest.fixture(scope="module")
def course(tmp_path_factory, sandbox_available):
    """The class (every attack beside an honest and a blank learner, in both assignments) written
    and graded by ``python -m autograder grade``; ``(root, {(student, assignment): grades.csv row})``."""
    root = tmp_path_factory.mktemp("evidence")
    for assignment, test_cell in ASSIGNMENTS.items():
        source = _source(test_cell)
        (root / "solutions" / assignment).mkdir(parents=True)
        nbformat.write(source, root / "solutions" / assignment / f"{assignment}.ipynb")
        for student, answer in STUDENTS.items():
            (root / "submitted" / student / assignment).mkdir(parents=True)
            nbformat.write(submission_of(source, answer), root / "submitted" / student / assignment / "f.ipynb")
    done = _cli(
        "grade", str(root / "submitted"), "--out", str(root / "out"), "--solutions", str(root / "solutions"),
        "--jobs", "1", "--cell-timeout", "20", "--no-progress",
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    with open(root / "out" / "grades.csv", newline="") as f:
        rows = {(r["student_id"], r["assignment_id"]): r for r in csv.DictReader(f)}
    return root, rows


def test_the_honest_learner_passes_and_the_blank_one_does_not(course):
    """Beside the attacks, does the honest learner get full marks and the blank one none?"""
    _, rows = course
    for assignment in ASSIGNMENTS:
        assert rows[("honest", assignment)]["score"] == rows[("honest", assignment)]["max_score"] == "2"
        assert rows[("honest", assignment)]["status"] == "graded"
        assert rows[("blank", assignment)]["score"] == "0"


@pytest.mark.parametrize("assignment", sorted(ASSIGNMENTS))
@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_a_test_cell_that_ends_without_a_failure_earns_nothing_in_a_class_run(course, attack, assignment):
    """Does each way of ending a test cell "without a failure" score 0, with a message on the
    learner's page that says what happened (never nothing, never "passed")?"""
    root, rows = course
    row = rows[(f"atk-{attack}", assignment)]
    assert float(row["score"]) == 0, row
    page = (root / "out" / "feedback" / f"atk-{attack}" / f"{assignment}.html").read_text()
    assert "All checks passed" not in page
    assert html.escape(SAID[attack][sorted(ASSIGNMENTS).index(assignment)], quote=False) in page


@pytest.mark.parametrize("platform", ["gradescope", "prairielearn"])
@pytest.mark.parametrize(
    ("student", "assignment"),
    [
        ("atk-unnamed-empty", "ex01"),
        ("atk-unnamed-empty", "ex02"),
        ("atk-str-raises", "ex01"),
        ("atk-forged-first-record", "ex01"),
        ("honest", "ex01"),
    ],
)
def test_grade_one_scores_as_the_class_run_for_both_platforms(course, student, assignment, platform, tmp_path):
    """Does ``grade-one`` give the class run's score in each platform's results.json, saying for an
    attack which error it raised (an unnamed one as such), never "All checks passed."?"""
    root, rows = course
    out = tmp_path / "results.json"
    done = _cli(
        "grade-one", str(root / "submitted" / student / assignment), "--assignment", assignment,
        "--solutions", str(root / "solutions"), "--json", str(out), "--format", platform, "--cell-timeout", "20",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads(out.read_text())
    [test] = results["tests"]
    said = test["output"] if platform == "gradescope" else test["message"]
    scored = results["score"] * 2 if platform == "prairielearn" else results["score"]
    assert scored == float(rows[(student, assignment)]["score"])
    assert (said == "All checks passed.") == (student == "honest"), said
    if student != "honest":
        assert SAID[student.removeprefix("atk-")][sorted(ASSIGNMENTS).index(assignment)] in said


def test_an_error_without_a_name_or_a_message_is_shown_as_such():
    """Does an empty or odd name read as data, and an error with no message say it had none?"""
    assert shown_name("") == shown_name("  ") == shown_name(None) == UNNAMED
    assert shown_name("torch.OutOfMemoryError") == "torch.OutOfMemoryError"
    assert shown_name("<b>x</b>") == "<exception named '<b>x</b>'>"
    assert points.raised("", " ") == points.raised(UNNAMED, "") == UNNAMED
    assert points.raised(shown_name("<b>"), "") == shown_name("<b>")  # shown once, never wrapped again


def test_an_exception_that_cannot_be_described_is_described_anyway():
    """Does ``described`` return a name and a message for an exception whose ``__str__`` raises
    ``SystemExit`` and whose class has no name?"""

    class Unreadable(BaseException):
        def __str__(self):
            raise SystemExit("no")

    Unreadable.__name__ = ""
    assert described(Unreadable()) == (UNNAMED, UNREADABLE)
    assert described(KeyboardInterrupt()) == ("KeyboardInterrupt", "")


RIGHT = [Checked("f()", "value", 1, 1, {})]


@pytest.mark.parametrize(
    ("cell", "stopped", "solution", "why"),
    [
        (CellRun(True, records=RIGHT), "timeout", RIGHT, "stopped: timeout"),
        (CellRun(False, records=RIGHT), None, RIGHT, points.NOT_RUN),
        (None, None, RIGHT, points.NOT_RUN),
        (CellRun(True, error=("", ""), records=RIGHT), None, RIGHT, UNNAMED),
        (CellRun(True, records=[]), None, RIGHT, "did not all run"),
        (CellRun(True, records=RIGHT), None, [], points.NO_REFERENCE),
        (CellRun(True, records=[*RIGHT, Checked("g()", "value", 1, 1, {})]), None, RIGHT, "'g()'"),
        (CellRun(True, records=[*RIGHT, *RIGHT]), None, RIGHT, "'f()'"),
    ],
)
def test_nothing_but_every_check_judged_right_earns_the_points(cell, stopped, solution, why):
    """Is a question scored 0, with a message saying why, when its cell stopped, never ran, raised
    anything, lacks a record, has no reference, or reported a record it does not make?"""
    score, message = question_points(2, cell, stopped, solution)
    assert score == 0 and why in message
    assert question_points(2, CellRun(True, records=RIGHT), None, RIGHT) == (2.0, "")
