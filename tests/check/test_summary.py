"""Does ``check.summary()`` say, per question of the exercise run in this kernel, passed / failed (the
first line of its cause) / not run yet, from the checks that ran, and that graders run hidden tests?"""

from __future__ import annotations

import copy
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from autograder.check.summary import HIDDEN_TESTS, Question, questions, summarize

REPO = Path(__file__).resolve().parents[2]
EXERCISE = REPO / "exercises" / "ex01_graph" / "ex01_graph.ipynb"
SOLUTION = REPO / "solutions" / "ex01_graph" / "ex01_graph.ipynb"


def test_each_question_reads_passed_failed_with_its_cause_or_not_run_yet():
    asked = [Question(1, 2, "check one"), Question(2, 3, "check two"), Question(3, 1.5, "check three")]
    text = summarize("Exercise 9", asked, {"check one": "", "check two": "d loss / d w is 2x the reference"})
    assert text.splitlines() == [
        "Exercise 9: 1 of 3 questions pass here (2 of 6.5 points).",
        "  Question 1 (2 points): passed",
        "  Question 2 (3 points): failed: d loss / d w is 2x the reference",
        "  Question 3 (1.5 points): not run yet",
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
    """Exercise 1's release with question 3 answered (the solution's answer), question 2's check left
    out, and check.summary() last, run top to bottom in a kernel that goes on after errors."""
    notebook = nbformat.read(EXERCISE, as_version=4)
    cell(notebook, "q3_answer").source = cell(nbformat.read(SOLUTION, as_version=4), "q3_answer").source
    notebook.cells.remove(cell(notebook, "q2_check"))
    notebook.cells.append(nbformat.v4.new_code_cell("check.summary()"))
    client = NotebookClient(
        copy.deepcopy(notebook), timeout=300, allow_errors=True, resources={"metadata": {"path": str(tmp_path)}}
    )
    ran = client.execute()
    shown = "".join(o.get("text", "") for o in ran.cells[-1].outputs)
    assert "Question 1 (2 points): failed: predicted_counts is not answered yet" in shown, shown
    assert "Question 2 (3 points): not run yet" in shown, shown
    assert "Question 3 (3 points): passed" in shown, shown
    assert shown.startswith("Exercise 1: the graph is built as the code runs: 1 of 3 questions pass here"), shown
    assert HIDDEN_TESTS in shown
