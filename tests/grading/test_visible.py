"""Does the visible part of each check cell (what the learner runs in the released notebook, before any
hidden test) already catch the mistake its question is about? Hidden tests add inputs, not the point of the
question: each typical mistake (``autograder/grading/mistakes``) must fail its question in the learner's own
notebook too, not only when graded."""

import nbformat
import pytest

from autograder.grading.mistakes import MISTAKES
from tests.grading import inprocess

# Mistakes that only hidden tests can catch, by design: a prediction question shows the learner part of its
# entries and grades the rest (a visible check of every entry would let a learner try values until it
# passes), and a question whose text says what the hidden inputs add (frozen layers, other dtypes, in-place
# modules, models used out of order) makes that part of the question. Every other mistake must fail visibly.
GRADED_ONLY = {
    "ex04-q1-zeros-not-none": "predictions d to g are graded only",
    "ex04-q1-logged-copy": "predictions d to g are graded only",
    "ex05-q1-data-shares": "predictions d, e and g are graded only",
    "ex05-q1-noop-write": "predictions d, e and g are graded only",
    "ex05-q2-data-caught": "snippets E to J are graded only",
    "ex06-q1-created-in-no-grad": "six of the predictions are graded only",
    "ex06-q2-enable-grad-revives": "snippets E to L are graded only",
    "ex07-q3-running-sums": "the other snippets are graded only",
    "ex08-q3-head-loses-grad": "the gradient predictions are graded only",
    "ex09-q3-no-cycle": "w and y_after_del are graded only",
    "ex10-q3-frozen-counted": "the question states that hidden models have frozen layers",
    "ex11-q1-every-parameter": "the question states that hidden models have frozen parameters",
    "ex12-q1-forward-mode-records-nothing": "predictions E to H are graded only",
    "ex12-q3-bytes-of-frozen": "the question states that hidden models have frozen layers",
    "ex12-q3-bytes-float32": "the question states that hidden models have other dtypes",
    "ex13-q1-python-breaks": "six of the eight counts are graded only",
    "ex13-q1-int-not-item": "six of the eight counts are graded only",
    "ex13-q1-one-break-per-print-function": "six of the eight counts are graded only",
    "ex13-q2-float32-only": "the question states that hidden tests use float64",
    "ex14-q3-registration-order": "the question states that hidden models use their layers out of order",
}
CASES = [
    (exercise, student) for exercise, students in MISTAKES.items() for student in students if student not in GRADED_ONLY
]


def released(exercise: str) -> nbformat.NotebookNode:
    return nbformat.read(inprocess.ROOT / "exercises" / exercise / f"{exercise}.ipynb", as_version=4)


@pytest.mark.parametrize("exercise,student", CASES)
def test_the_visible_check_catches_the_typical_mistake(exercise, student):
    """Run as the learner runs it (the release, references computed in the notebook), does the check cell
    of each question this mistake is about fail?"""
    case = MISTAKES[exercise][student]
    run = inprocess.run(released(exercise), withheld=False, answers=case["answers"])
    assert set(case["fails"]) <= set(run.errors), {gid: run.errors.get(gid, "passed") for gid in case["fails"]}


def test_every_exemption_names_a_typical_mistake():
    """Is every mistake exempted above still a typical mistake (no stale exemption)?"""
    listed = {student for students in MISTAKES.values() for student in students}
    assert set(GRADED_ONLY) <= listed
