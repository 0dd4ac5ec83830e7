"""What an instructor sees: formgrader, started as `./course lab --instructor` starts it, shows the
scores the course's grader wrote into the course's gradebook (screenshot in
``test-artifacts/browser/formgrader-*.png``), and each submission's graded notebook."""

from __future__ import annotations

import csv
import os
import shutil
import subprocess
import sys

import pytest
from nbgrader.api import Gradebook

from autograder.grading.runs.batch import load_sources
from autograder.grading.runs.demo import build_demo_class
from tests.course_lab import base_and_token, course_lab
from tests.files import fresh_jupyter_env

from .test_browser import (
    ARTIFACTS,
    _missing,
    browser,  # noqa: F401 -- the headless Chromium fixture, used by name
    course_copy,
)

pytestmark = pytest.mark.browser
ASSIGNMENT = "ex01_graph"


@pytest.fixture(scope="module", autouse=True)
def _browser_available():
    reason = _missing()
    if reason and os.environ.get("COURSE_REQUIRE_BROWSER"):
        pytest.fail(f"COURSE_REQUIRE_BROWSER is set, but {reason}")
    if reason:
        pytest.skip(reason)


@pytest.fixture(scope="module")
def graded_course(tmp_path_factory):
    """A copy of the course where three learners' ex01_graph (as `nbgrader collect` leaves them)
    were graded with `python -m autograder grade --course .`; returns (root, grades.csv rows)."""
    from .grading.conftest import require_sandbox

    require_sandbox()
    tmp = tmp_path_factory.mktemp("formgrader")
    root = course_copy(tmp / "course")
    build_demo_class(tmp / "demo", root=root)
    name = load_sources(root / "solutions")[ASSIGNMENT][0]
    for student, demo in [("ada", "correct"), ("bob", "blank"), ("grace", "ex01-q2-sign")]:
        target = root / "submitted" / student / ASSIGNMENT / name
        target.parent.mkdir(parents=True)
        shutil.copy2(tmp / "demo" / demo / ASSIGNMENT / name, target)
        (target.parent / "timestamp.txt").write_text("2026-01-20 10:00:00.000000 UTC", encoding="utf-8")
    env = {**os.environ, "PATH": f"{root}/.venv/bin:{os.environ['PATH']}"}
    env.pop("PYTHONPATH", None)
    subprocess.run(["nbgrader", "generate_assignment", ASSIGNMENT], cwd=root, env=env, check=True, capture_output=True)
    subprocess.run(  # the README's way to name a learner
        ["nbgrader", "db", "student", "add", "ada", "--first-name", "Ada", "--last-name", "Lovelace"],
        cwd=root,
        env=env,
        check=True,
        capture_output=True,
    )
    done = subprocess.run(
        [sys.executable, "-m", "autograder", "grade", "--course", "."],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    with open(root / "grading-output" / "grades.csv", newline="", encoding="utf-8") as f:
        return root, {r["student_id"]: r for r in csv.DictReader(f)}


@pytest.fixture(scope="module")
def instructor_lab(graded_course, tmp_path_factory):
    """`./course lab --instructor --no-browser --port PORT` in the graded copy; yields (base URL, token)."""
    root, _ = graded_course
    tmp = tmp_path_factory.mktemp("instructor-lab")
    env = {**fresh_jupyter_env(os.environ, tmp), "PYTHONPATH": str(root)}
    with course_lab(root, env, ARTIFACTS / "formgrader-lab.log", "--instructor") as url:
        yield base_and_token(url)


def test_formgrader_shows_the_graders_scores(graded_course, instructor_lab, browser):  # noqa: F811
    """Does formgrader's gradebook page for the notebook list each learner with the score in
    grades.csv, and does a submission's page show its graded notebook with the scores?"""
    _, rows = graded_course
    base, token = instructor_lab
    page = browser.new_page()
    try:
        # the login cookie comes with JupyterLab's page; formgrader's own API calls need it
        page.goto(f"{base}/lab?token={token}")
        page.wait_for_function("() => !!(window.jupyterapp || document.querySelector('#main'))", timeout=120_000)
        page.goto(f"{base}/formgrader/manage_submissions/{ASSIGNMENT}")
        try:
            page.wait_for_selector("table tbody tr td.score:not(:empty)", timeout=120_000)
        except Exception:  # noqa: BLE001 -- Playwright's timeout: keep a screenshot, fail with what the page says
            page.screenshot(path=str(ARTIFACTS / "formgrader-failed.png"), full_page=True)
            raise AssertionError(page.inner_text("body")[:3000]) from None
        page.wait_for_timeout(1000)
        page.screenshot(path=str(ARTIFACTS / "formgrader-submissions.png"), full_page=True)
        shown = {}
        for tr in page.locator("table tbody tr").all():
            cells = [c.strip() for c in tr.locator("td").all_inner_texts()]
            shown[cells[1]] = cells
        assert set(shown) == set(rows), shown
        assert shown["ada"][0] == "Lovelace, Ada", shown["ada"]  # the name `nbgrader db student add` gave
        for student, row in rows.items():
            assert shown[student][3] == "graded", shown[student]
            assert shown[student][4] == f"{float(row['score']):g} / {float(row['max_score']):g}", (shown[student], row)
        with Gradebook(f"sqlite:///{graded_course[0]}/gradebook.db") as gb:  # her notebook's manual-grading page
            submission_id = gb.find_submission_notebook(ASSIGNMENT, ASSIGNMENT, "ada").id
        page.goto(f"{base}/formgrader/submissions/{submission_id}/")
        page.wait_for_selector(".nbgrader_cell", timeout=120_000)
        page.screenshot(path=str(ARTIFACTS / "formgrader-submission.png"), full_page=True)
        assert page.locator("input.score").count() == len(
            [
                c
                for c in load_sources(graded_course[0] / "solutions")[ASSIGNMENT][1].cells
                if c.metadata.get("nbgrader", {}).get("grade")
            ]
        )
    finally:
        page.close()


def test_formgrader_shows_why_a_test_cell_failed(graded_course, instructor_lab, browser):  # noqa: F811
    """Does a failed test cell on formgrader's manual-grading page show the grader's verdict and
    cause (grace flipped a gradient's sign), not the learner's own "checked when graded" lines?"""
    root, rows = graded_course
    assert float(rows["grace"]["score"]) < float(rows["grace"]["max_score"]), rows["grace"]
    base, token = instructor_lab
    page = browser.new_page()
    try:
        page.goto(f"{base}/lab?token={token}")
        page.wait_for_function("() => !!(window.jupyterapp || document.querySelector('#main'))", timeout=120_000)
        with Gradebook(f"sqlite:///{root}/gradebook.db") as gb:
            submission_id = gb.find_submission_notebook(ASSIGNMENT, ASSIGNMENT, "grace").id
        page.goto(f"{base}/formgrader/submissions/{submission_id}/")
        page.wait_for_selector(".nbgrader_cell", timeout=120_000)
        page.screenshot(path=str(ARTIFACTS / "formgrader-failed-cell.png"), full_page=True)
        text = page.inner_text("body")
        verdicts = [line for line in text.splitlines() if line.startswith("Graded: ")]
        failed = [line for line in verdicts if not line.endswith("All checks passed.")]
        assert failed, verdicts
        assert any(line.startswith("Graded: 0 /") and len(line) > len("Graded: 0 / 3. ") + 10 for line in failed), (
            failed
        )
    finally:
        page.close()


EMPTY_OUTPUTS = """() => Array.from(document.querySelectorAll('.output_subarea, .jp-OutputArea-output'))
    .filter(o => !o.innerText.trim() && !o.querySelector('img, svg')).length"""


def test_formgrader_draws_no_empty_box_above_a_failed_cells_verdict(graded_course, instructor_lab, browser):  # noqa: F811
    """bob handed in the release unanswered: on formgrader's manual-grading page, does each failed
    test cell show its verdict (`Graded: 0 / 2. ... is not answered yet ...`) with no empty output
    box above it (the check's error, whose message the verdict already says, had no traceback lines)?"""
    root, rows = graded_course
    assert float(rows["bob"]["score"]) == 0, rows["bob"]
    base, token = instructor_lab
    page = browser.new_page()
    try:
        page.goto(f"{base}/lab?token={token}")
        page.wait_for_function("() => !!(window.jupyterapp || document.querySelector('#main'))", timeout=120_000)
        with Gradebook(f"sqlite:///{root}/gradebook.db") as gb:
            submission_id = gb.find_submission_notebook(ASSIGNMENT, ASSIGNMENT, "bob").id
        page.goto(f"{base}/formgrader/submissions/{submission_id}/")
        page.wait_for_selector(".nbgrader_cell", timeout=120_000)
        page.screenshot(path=str(ARTIFACTS / "formgrader-unanswered.png"), full_page=True)
        verdicts = [line for line in page.inner_text("body").splitlines() if line.startswith("Graded: 0 /")]
        assert verdicts and all("not answered yet" in line for line in verdicts), verdicts
        assert page.evaluate(EMPTY_OUTPUTS) == 0
    finally:
        page.close()
