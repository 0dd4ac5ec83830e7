"""Does ``check.summary()`` say, per question of the exercise run in this kernel, passed / failed (the
first line of its cause) / not run yet, from the checks that ran, and that graders run hidden tests?"""

from __future__ import annotations

import copy
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from autograder.check.summary import HIDDEN_TESTS, NO_CHECK_RAN, ONLY_WHEN_GRADED, Question, questions, summarize

REPO = Path(__file__).resolve().parents[2]
EXERCISE = REPO / "exercises" / "ex01_graph" / "ex01_graph.ipynb"
SOLUTION = REPO / "solutions" / "ex01_graph" / "ex01_graph.ipynb"


def test_each_question_reads_passed_failed_with_its_cause_or_not_run_yet():
    asked = [Question(1, 2, "check one"), Question(2, 3, "check two"), Question(3, 1.5, "check three"),
             Question(4, 1, "check four")]  # fmt: skip
    text = summarize("Exercise 9", asked, {"check one": "", "check two": "d loss / d w is 2x the reference"})
    assert text.splitlines() == [
        "Exercise 9: 1 of 4 questions pass here (2 of 7.5 points).",
        "  Question 1 (2 points): passed",
        "  Question 2 (3 points): failed: d loss / d w is 2x the reference",
        "  Question 3 (1.5 points): not run yet",
        "  Question 4 (1 point): not run yet",
        HIDDEN_TESTS,
    ]
    assert "hidden tests" in HIDDEN_TESTS


def test_the_questions_of_an_exercise_are_its_check_cells_with_their_points():
    found = questions(EXERCISE)
    cells = [c for c in nbformat.read(EXERCISE, as_version=4).cells if c.metadata.get("nbgrader", {}).get("grade")]
    assert [(q.number, q.points) for q in found] == [(i + 1, c.metadata.nbgrader.points) for i, c in enumerate(cells)]


def cell(notebook, grade_id: str):
    return next(c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)


def test_in_a_real_kernel_the_summary_reports_what_the_learners_run_did(tmp_path):
    """Exercise 1's release with question 3 answered (the solution's answer), question 1 left as
    released, question 2's check left out, and check.summary() last, run top to bottom in a kernel
    that goes on after errors: passed, not answered yet (not "failed") and not run yet?"""
    notebook = nbformat.read(EXERCISE, as_version=4)
    cell(notebook, "q3_answer").source = cell(nbformat.read(SOLUTION, as_version=4), "q3_answer").source
    notebook.cells.remove(cell(notebook, "q2_check"))
    notebook.cells.append(nbformat.v4.new_code_cell("check.summary()"))
    client = NotebookClient(
        copy.deepcopy(notebook), timeout=300, allow_errors=True, resources={"metadata": {"path": str(tmp_path)}}
    )
    ran = client.execute()
    shown = "".join(o.get("text", "") for o in ran.cells[-1].outputs)
    # the release's stub is not a wrong answer: "not answered yet", never "failed"
    assert "Question 1 (2 points): not answered yet" in shown and "failed" not in shown, shown
    assert "Question 2 (3 points): not run yet" in shown, shown
    assert "Question 3 (3 points): passed" in shown, shown
    assert shown.startswith("Exercise 1: the graph is built as the code runs: 1 of 3 questions pass here"), shown
    assert HIDDEN_TESTS in shown


def test_a_cell_that_ends_quietly_without_any_check_passing_is_not_passed():
    """Is a check cell that raised nothing but printed no check's OK (an answer that patched the checks
    away) reported as such, and one whose only checks are checked when graded said so, neither passed?"""
    asked = [Question(1, 2, "check one"), Question(2, 3, "check two")]
    text = summarize("Exercise 9", asked, {"check one": NO_CHECK_RAN, "check two": ONLY_WHEN_GRADED})
    assert text.splitlines()[:3] == [
        "Exercise 9: 0 of 2 questions pass here (0 of 5 points).",
        f"  Question 1 (2 points): failed: {NO_CHECK_RAN}",
        f"  Question 2 (3 points): {ONLY_WHEN_GRADED}",
    ]


@pytest.mark.parametrize("solution", sorted((REPO / "solutions").glob("ex*/ex*.ipynb")), ids=lambda p: p.stem)
def test_every_solution_passes_every_question_in_the_learners_summary(solution, tmp_path):
    """Run top to bottom in a real kernel, does each exercise's solution end with a summary where every
    question passes, each on its checks' own OKs?"""
    notebook = nbformat.read(solution, as_version=4)
    assert "check.summary()" in notebook.cells[-1].source or any("check.summary()" in c.source for c in notebook.cells)
    client = NotebookClient(notebook, timeout=600, resources={"metadata": {"path": str(tmp_path)}})
    ran = client.execute()
    shown = next("".join(o.get("text", "") for o in c.outputs) for c in ran.cells if "check.summary()" in c.source)
    asked = len(questions(solution))
    assert f": {asked} of {asked} questions pass here" in shown, shown


def test_an_answer_that_patches_the_checks_away_does_not_pass_here(tmp_path):
    """Exercise 1 with question 3's right answer followed by code that turns every check into a no-op:
    does the summary say question 3's checks reported no result, where before it read "passed"?"""
    notebook = nbformat.read(EXERCISE, as_version=4)
    cell(notebook, "q3_answer").source = cell(nbformat.read(SOLUTION, as_version=4), "q3_answer").source + (
        "\nfrom autograder import check as _c\n"
        "for _name in ('tensor', 'grads', 'value', 'nbytes', 'at_most', 'predictions'):\n"
        "    setattr(_c, _name, lambda *a, **k: None)\n"
    )
    notebook.cells.append(nbformat.v4.new_code_cell("check.summary()"))
    client = NotebookClient(notebook, timeout=300, allow_errors=True, resources={"metadata": {"path": str(tmp_path)}})
    shown = "".join(o.get("text", "") for o in client.execute().cells[-1].outputs)
    assert f"Question 3 (3 points): failed: {NO_CHECK_RAN}" in shown, shown
