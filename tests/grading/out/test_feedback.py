"""Does the feedback page tell the learner what happened without showing hidden tests, in one page
that a browser shows offline?"""

import html
import re
import shutil
import time

import nbformat
import pytest

from autograder.grading.judge.grade_one import QuestionResult, Result, grade_notebook, solution_records
from autograder.grading.out.feedback import SUMMARY_CHARACTERS, feedback_html, feedback_notebook, gist
from autograder.grading.out.feedback_page import MAX_PAGE
from autograder.grading.sandbox.limits import Limits
from autograder.lessons import COURSE_ROOT

from ..conftest import needs_sandbox, submission_of
from ..pages import page_problems
from ..runs.test_batch import grade_cli

HIDDEN_LINE = 'check.value(f(), expected_f(), "f()"'


def graded(source, expected, sandbox, tmp_path, answer):
    path = tmp_path / "answer.ipynb"
    nbformat.write(submission_of(source, answer), path)
    return grade_notebook(path, source, expected, "ada", "ex01", sandbox, Limits())


def test_hidden_tests_and_tracebacks_are_removed(source, expected, sandbox, tmp_path):
    """Is neither the hidden test's code nor a traceback in the page, but its message is?"""
    assert HIDDEN_LINE in source.cells[3].source, "the hidden line this test looks for"
    page = feedback_html(graded(source, expected, sandbox, tmp_path, "def f():\n    return 2"))
    assert HIDDEN_LINE not in page.replace("&quot;", '"')
    assert "f() should be 1" in page and "hidden tests ran here" in page
    errors = [
        o
        for c in feedback_notebook(graded(source, expected, sandbox, tmp_path, "def f():\n    return None")).cells
        for o in c.get("outputs", [])
        if o["output_type"] == "error"
    ]
    assert [o["traceback"] for o in errors] == [[f"CheckFailed: {errors[0]['evalue']}"]]


# a question checked for 5 rows, and, hidden, for 7 and 9: its causes name the number of rows
ROWS_CELL = (
    "import torch\n"
    "### BEGIN REFERENCE\n"
    "def ones(n):\n"
    "    return torch.ones(n)\n"
    "### END REFERENCE\n"
    "def causes(n):\n"
    "    return {2.0: f'each row counted twice (N = {n} rows here)', 'mismatch': 'A row is off.'}\n"
    "check.tensor(f(5), ones(5), 'f for each row', causes=causes(5))\n"
    "### BEGIN HIDDEN TESTS\n"
    "for n in (7, 9):\n"
    "    check.tensor(f(n), ones(n), 'f for each row', show_values=False, causes=causes(n))\n"
    "### END HIDDEN TESTS"
)


def test_a_hidden_failures_cause_is_shown_without_its_inputs(source, sandbox, tmp_path):
    """Does a page say the cause a failed hidden check's diagnosis found, whole when no input is in
    it, and without the number of rows its hidden input put into it ("N = 7 rows here")?"""
    source.cells[2].source = "def f(n):\n    ### BEGIN SOLUTION\n    return torch.ones(n)\n    ### END SOLUTION"
    source.cells[3].source = ROWS_CELL
    expected = solution_records(source, sandbox, Limits())
    twice = graded(source, expected, sandbox, tmp_path, "def f(n):\n    return torch.ones(n) * (2 if n == 7 else 1)")
    message = twice.questions[0].message
    assert message.endswith("It is a constant multiple of the expected value: each row counted twice"), message
    assert not re.search(r"\d", message) and twice.questions[0].cause == "tensor.multiple.each_row_counted_twice"
    page = html.unescape(feedback_html(twice))
    assert "each row counted twice" in page and not re.search(r"N = \d|\d rows", page)
    other = graded(
        source,
        expected,
        sandbox,
        tmp_path,
        "def f(n):\n    return torch.ones(n).index_fill(0, torch.tensor([0]), float(n != 9))",
    )
    assert other.questions[0].message.endswith("It differs from the expected value. A row is off.")


def test_summary_gives_score_and_reason(source, expected, sandbox, tmp_path):
    """Does the page start with the score and, per question, why it failed, titled with the
    assignment and the student?"""
    page = feedback_html(graded(source, expected, sandbox, tmp_path, "def f():\n    return None"))
    summary = page[page.index("<main") : page.index("</section>")]
    assert "<strong>0 / 2</strong>" in summary and "f returned None" in summary and "ada" in summary
    assert "<title>ex01 \u2014 ada</title>" in page


def test_page_loads_nothing_and_shows_maths_as_mathml(source, expected, sandbox, tmp_path):
    """Is the page self-contained (no script, no stylesheet or image from the network) with the
    markdown's inline and display maths written as MathML, not left as LaTeX for MathJax?"""
    source.cells[1].source = "Return $x^2$ at $x = 1$:\n\n$$L = \\frac{1}{N}\\sum_{n=1}^{N} p_n$$"
    page = feedback_html(graded(source, expected, sandbox, tmp_path, "def f():\n    return 1"))
    assert "<script" not in page.lower()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page), "loads something"
    assert page.count("<math") == 3 and 'display="block"' in page
    assert "$" not in html.unescape(re.sub(r"<[^>]+>", "", page))


def test_summary_result_column_is_left_aligned(source, expected, sandbox, tmp_path):
    """Does the summary table align its result column (sentences) to the left?"""
    page = feedback_html(graded(source, expected, sandbox, tmp_path, "def f():\n    return None"))
    assert '<th style="text-align:left">result</th>' in page


def test_the_page_shows_verdicts_not_checked_when_graded(source, expected, sandbox, tmp_path):
    """Does the page, which is the grade, leave out the "checked when graded" lines a check printed
    in the learner's process, keeping the other lines and the verdict?"""
    result = graded(source, expected, sandbox, tmp_path, "def f():\n    return 2")
    printed = "".join(o.get("text", "") for c in result.notebook.cells for o in c.get("outputs", []))
    assert "checked when graded" in printed, "the graded run printed no such line to leave out"
    page = html.unescape(feedback_html(result))
    assert "checked when graded" not in page and "Graded: " in page and "OK f() is not None" in page


HOSTILE = '[x](javascript:alert(1)) <img src="http://127.0.0.1/x" onerror="alert(1)"> <script>alert(1)</script> '


def test_nothing_from_a_submission_becomes_markup_and_the_page_is_linear(source):
    """Are a student id, a status, failure messages, outputs and an image payload built as links,
    images and script shown as escaped text only, with 400,000 '[' rendered in well under a second
    (markdown rendering of them is quadratic)?"""
    nb = nbformat.reads(nbformat.writes(source), as_version=4)
    nb.cells[2].outputs = [
        nbformat.v4.new_output("stream", name="stdout", text=HOSTILE),
        nbformat.v4.new_output("display_data", data={"text/plain": HOSTILE, "image/png": '" onerror="alert(1)'}),
        nbformat.v4.new_output("error", ename=HOSTILE, evalue="[" * 400_000, traceback=[HOSTILE]),
    ]
    result = Result(
        "ada" + HOSTILE,
        "ex01" + HOSTILE,
        "graded" + HOSTILE,
        [QuestionResult("q1_check", 2, 0, HOSTILE + "[" * 400_000)],
        nb,
    )
    started = time.process_time()  # CPU: the page's own work, whatever else the machine runs
    page = feedback_html(result)
    assert time.process_time() - started < 0.5
    assert page_problems(page) == []
    assert html.escape(HOSTILE) in page  # shown, as text


def test_a_page_has_a_size_limit_with_a_note(source):
    """Is a page whose cells would exceed MAX_PAGE characters cut with a note, summary first?"""
    nb = nbformat.reads(nbformat.writes(source), as_version=4)
    nb.cells += [nbformat.v4.new_code_cell("x = 1\n" * 16_000) for _ in range(200)]
    page = feedback_html(Result("ada", "ex01", "graded", [QuestionResult("q1_check", 2)], nb))
    assert len(page) <= MAX_PAGE + 1000 and "a feedback page holds at most" in page
    assert page.index("Feedback: ex01") < page.index("a feedback page holds at most")


def test_a_late_submitters_page_shows_the_score_after_the_late_penalty(source):
    """Does a late submission's page give the score the gradebook gives (after the late-submission
    plugin's penalty) and say how it came about, rather than the full marks before it?"""
    nb = nbformat.v4.new_notebook()
    on_time = Result("bob", "ex02", "graded", [QuestionResult("q1_check", 8, 8)], nb)
    late = Result("bob", "ex02", "graded", [QuestionResult("q1_check", 8, 8)], nb, late_penalty=8, seconds_late=1800)
    assert "<strong>8 / 8</strong>" in feedback_html(on_time)
    page = feedback_html(late)
    assert "<strong>0 / 8 (8 before the late-submission penalty of 8, 30 min late)</strong>" in page
    assert "<strong>8 / 8</strong>" not in page
    # nbgrader's default policy (none): the score stands, and the page still says it came late
    unpenalised = Result("bob", "ex02", "graded", [QuestionResult("q1_check", 8, 8)], nb, seconds_late=36 * 3600)
    assert "<strong>8 / 8, late (36 h, no penalty)</strong>" in feedback_html(unpenalised)


def test_a_sources_check_helpers_are_folded_on_the_page(source):
    """Is a collapsed cell of the source (a question's check helpers) folded on the page, under its
    first line, as JupyterLab shows it, while the other cells' code is shown open?"""
    nb = nbformat.reads(nbformat.writes(source), as_version=4)
    nb.cells[2].source = "# Question 1's check helpers <b>\ndef helper():\n    return 1\n"
    nb.cells[2].metadata["jupyter"] = {"source_hidden": True}
    page = feedback_html(Result("ada", "ex01", "graded", [QuestionResult("q1_check", 2, 2, "")], nb))
    assert "<details><summary># Question 1&#x27;s check helpers &lt;b&gt;</summary><pre>" in page
    assert page.count("<details>") == 1
    assert page_problems(page) == []


def test_the_summary_row_gives_the_cause_a_message_states_on_a_later_line():
    """Does a question's summary row carry the cause sentence and listed reasons that a message gives
    after its first line, without the expected/received values and the raised-in line (those stay under
    the check cell), and is a long gist cut?"""
    tensor = (
        "0.weight differs from the expected value (relative error 7.9e+00 in max-norm).\n"
        "  (the same for 0.bias)\n  expected: [1.0, 2.0]\n  received: [3.0, 4.0]\n"
        "A hook's result is discarded: clip p.grad in place.\n[cause: tensor.mismatch.a_hooks_result]"
    )
    assert gist(tensor) == (
        "0.weight differs from the expected value (relative error 7.9e+00 in max-norm). "
        "A hook's result is discarded: clip p.grad in place."
    )
    prediction = "4 of 5 Node counts are right; rethink: AccumulateGrad\n  - AccumulateGrad: one per leaf\n"
    assert gist(prediction) == "4 of 5 Node counts are right; rethink: AccumulateGrad - AccumulateGrad: one per leaf"
    error = "f raised RuntimeError: boom\n  raised in f(), line 4: g = x\nThe graph was freed by a first backward."
    assert gist(error) == "f raised RuntimeError: boom The graph was freed by a first backward."
    assert len(gist("x\n" + "cause " * 500)) <= SUMMARY_CHARACTERS and gist("").strip() == ""
    page = feedback_html(Result("ada", "ex01", "graded", [QuestionResult("q1_check", 2, 0, tensor)], None))
    assert "A hook&#x27;s result is discarded" in page.split("</table>")[0]


@needs_sandbox
def test_a_graded_page_says_an_undefined_answer_still_raises_not_that_it_may_not_have_run(tmp_path):
    """Graded by `python -m autograder grade` (which runs every cell), does a blank exercise 9 (the
    release as handed out, whose answer classes raise NotImplementedError in their bodies) get pages
    that say its answer cells still raise NotImplementedError, with nothing of "has not been run",
    and does an answer cell that the grader stops (it never ends) get a page that says no cell that
    ran defines the class, not that its stub still raises?"""
    release = COURSE_ROOT / "exercises" / "ex09_functions" / "ex09_functions.ipynb"
    submitted = tmp_path / "submitted"
    for student in ("blank", "looper"):
        (submitted / student / "ex09_functions").mkdir(parents=True)
    shutil.copy(release, submitted / "blank" / "ex09_functions" / release.name)
    looping = nbformat.read(release, as_version=4)
    answer = next(c for c in looping.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "q1_answer")
    answer.source = "class StableSoftplus(Function):\n    while True:\n        pass\n"
    nbformat.write(looping, submitted / "looper" / "ex09_functions" / release.name)
    run = grade_cli(submitted, "--out", tmp_path / "out", "--jobs", "1", "--cell-timeout", "8", cwd=COURSE_ROOT)
    assert run.returncode == 0, run.stderr
    pages = {
        s: html.unescape((tmp_path / "out" / "feedback" / s / "ex09_functions.html").read_text(encoding="utf-8"))
        for s in ("blank", "looper")
    }
    for name in ("StableSoftplus", "LeanLeakyReLU"):
        assert f"{name} is not answered yet: its answer cell still raises NotImplementedError." in pages["blank"]
    assert "not been run" not in pages["blank"] and "not been run" not in pages["looper"]
    assert "StableSoftplus is not defined: no cell that ran defines it" in pages["looper"]
    assert "StableSoftplus is not answered yet" not in pages["looper"]


@pytest.mark.parametrize("why", ["no notebook", "unreadable: NotJSONError", "refused: a symbolic link"])
def test_a_submission_where_nothing_ran_is_not_said_to_have_passed(why):
    """When nothing of a submission ran (no notebook, an unreadable file, a link), does its page
    say each question was not graded and why, never "passed", and not point at check cells that
    are not there?"""
    result = Result("ada", "ex01", why, [QuestionResult("q1_check", 3), QuestionResult("q2_check", 2)])
    page = feedback_html(result)
    assert "passed" not in page and "Under each check cell" not in page
    assert page.count(f"not graded: {html.escape(why)}") == 2
    assert f"Nothing of this submission ran ({html.escape(why)})" in page
