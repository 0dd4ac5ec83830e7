"""Can everyone read what the grader hands out? axe-core (``tests/accessibility.py``) on a feedback page
of each kind (full marks, a failure, nothing ran) and on the class report, opened from their files in
headless Chromium as a learner or an instructor opens them: no serious or critical WCAG 2.0/2.1 A or
AA violation (the lesser ones are printed). The pages come from the real grader: exercise 1 graded in
the sandbox, a correct answer and a typical mistake."""

from __future__ import annotations

import copy
import os

import nbformat
import pytest

from autograder.grading.judge.assemble import grade_id, is_answer
from autograder.grading.judge.grade_one import QuestionResult, Result, grade_notebook, solution_records
from autograder.grading.mistakes import MISTAKES
from autograder.grading.out.feedback import feedback_html
from autograder.grading.out.report import report_from_results
from autograder.grading.runs.demo import solution_answer
from autograder.grading.sandbox.limits import Limits
from autograder.lessons import COURSE_ROOT

pytestmark = pytest.mark.browser

EXERCISE = "ex01_graph"
MISTAKE = "ex01-q2-sign"


def _chromium() -> str:
    chromium = os.environ.get("COURSE_CHROMIUM", "/usr/bin/chromium")
    if pytest.importorskip("playwright.sync_api") and not os.access(chromium, os.X_OK):
        if os.environ.get("COURSE_REQUIRE_BROWSER"):
            pytest.fail(f"COURSE_REQUIRE_BROWSER is set, but there is no Chromium at {chromium}")
        pytest.skip(f"no Chromium at {chromium} (apt-get install chromium)")
    return chromium


@pytest.fixture(scope="module")
def pages(sandbox, tmp_path_factory):
    """``{kind: path of the page}``: feedback pages (full marks, a failure, nothing ran) and the report."""
    folder = tmp_path_factory.mktemp("pages")
    source = nbformat.read(COURSE_ROOT / "solutions" / EXERCISE / f"{EXERCISE}.ipynb", as_version=4)
    release = nbformat.read(COURSE_ROOT / "exercises" / EXERCISE / f"{EXERCISE}.ipynb", as_version=4)
    expected = solution_records(source, sandbox, Limits())
    solved = {grade_id(c): solution_answer(c.source) for c in source.cells if is_answer(c)}
    results = []
    mistaken = {**solved, **MISTAKES[EXERCISE][MISTAKE]["answers"]}
    for student, answers in (("full-marks", solved), ("a-failure", mistaken)):
        nb = copy.deepcopy(release)
        for cell in nb.cells:
            if is_answer(cell):
                cell.source = answers[grade_id(cell)]
        path = folder / f"{student}.ipynb"
        nbformat.write(nb, path)
        results.append(grade_notebook(path, source, expected, student, EXERCISE, sandbox, Limits()))
    asked = [QuestionResult(r.grade_id, r.points) for r in results[0].questions]
    results.append(Result("nothing-ran", EXERCISE, "no notebook", asked))
    assert results[0].score == results[0].max_score > results[1].score, "the pages are not of the kinds named"
    found = {}
    for result in results:
        found[result.student_id] = folder / f"{result.student_id}.html"
        found[result.student_id].write_text(feedback_html(result), encoding="utf-8")
    report_from_results(results, folder / "report", COURSE_ROOT / "solutions")
    found["class report"] = folder / "report" / "report.html"
    return found


def test_no_feedback_page_nor_the_class_report_has_a_serious_wcag_violation(pages):
    from playwright.sync_api import sync_playwright

    from tests.accessibility import audit, print_lesser

    found, lesser = [], []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=_chromium(), args=["--headless", "--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            for kind, path in pages.items():
                page.goto(path.as_uri())
                page.wait_for_load_state("load")
                serious, less = audit(page, kind)
                found, lesser = found + serious, lesser + less
        finally:
            browser.close()
    print_lesser(lesser)
    assert found == []
