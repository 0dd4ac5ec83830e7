"""Does the graded notebook that formgrader shows tell the truth about each test cell?"""

import nbformat

from autograder.check.checked import CHECKED_WHEN_GRADED
from autograder.grading.judge.grade_one import QuestionResult, Result
from autograder.grading.out.course_files import write_autograded
from autograder.grading.out.redact import BEGIN, END

HIDDEN = "assert_close(grad_at(hidden_x), reference_at(hidden_x))"


def _graded_notebook():
    nb = nbformat.v4.new_notebook()
    answer = nbformat.v4.new_code_cell("grad = -x.grad")
    answer.metadata["nbgrader"] = {"grade_id": "q1_answer", "solution": True, "grade": False}
    test = nbformat.v4.new_code_cell(f"check_q1(grad)\n# {BEGIN}\n{HIDDEN}\n# {END}")
    test.metadata["nbgrader"] = {"grade_id": "q1_check", "grade": True, "solution": False, "points": 3}
    test.outputs = [nbformat.v4.new_output("stream", name="stdout", text=f"gradients: {CHECKED_WHEN_GRADED}\n")]
    nb.cells = [answer, test]
    return nb


def _outputs(course, student="ada"):
    nb = nbformat.read(course / "autograded" / student / "ex01" / "ex01.ipynb", as_version=4)
    return "".join(o.get("text", "") for o in nb.cells[1].outputs)


def test_a_failed_test_cell_shows_its_verdict_and_cause_not_the_learners_pending_lines(tmp_path):
    message = f"gradients: the sign is flipped (-1x the reference)\n  where: {HIDDEN}"
    question = QuestionResult("q1_check", 3, 0, message, "grad.sign")
    result = Result("ada", "ex01", "graded", [question], _graded_notebook())
    write_autograded(tmp_path, result, "ex01.ipynb", None)
    shown = _outputs(tmp_path)
    assert shown.startswith("Graded: 0 / 3. gradients: the sign is flipped (-1x the reference)")
    assert CHECKED_WHEN_GRADED not in shown  # it read like a pass
    assert HIDDEN not in shown  # the message is scrubbed of hidden-test lines, as on the feedback page


def test_a_passed_test_cell_says_all_checks_passed(tmp_path):
    result = Result("ada", "ex01", "graded", [QuestionResult("q1_check", 3, 3)], _graded_notebook())
    write_autograded(tmp_path, result, "ex01.ipynb", None)
    assert _outputs(tmp_path) == "Graded: 3 / 3. All checks passed.\n"


def test_a_question_that_never_ran_says_not_graded_with_the_status(tmp_path):
    result = Result("ada", "ex01", "timeout in q1_answer", [QuestionResult("q1_check", 3)], _graded_notebook())
    write_autograded(tmp_path, result, "ex01.ipynb", None)
    assert _outputs(tmp_path) == "Graded: 0 / 3. not graded: timeout in q1_answer\n"
