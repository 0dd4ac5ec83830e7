"""Does the course hold together: do the solutions pass their own hidden tests, does a blank
release score 0, does each typical mistake get partial marks and a diagnosis that names it, is
exercises/ generated from solutions/, and do plain nbgrader commands work on the course?"""
import csv
import html

import pytest

from autograder.grading.batch import grade_class, load_sources
from autograder.grading.demo import build_demo_class
from autograder.grading.grade_one import solution_records
from autograder.grading.limits import Limits
from autograder.grading.mistakes import MISTAKES
from autograder.grading.nbgrader_cli import course_copy, nbgrader
from autograder.grading.release import stale
from autograder.grading.sandbox import Sandbox
from autograder.lessons import COURSE_ROOT

from .grading.conftest import require_sandbox

MISTAKE_CASES = [(student, assignment) for assignment, students in MISTAKES.items() for student in students]


@pytest.fixture(scope="module")
def sandbox():
    """One grading sandbox for the module (skipped where bubblewrap cannot run, failed instead
    when COURSE_REQUIRE_SANDBOX is set)."""
    require_sandbox()
    with Sandbox(Limits()) as box:
        yield box


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """The demo class, built and graded once: (expected, rows by (student, assignment), out)."""
    require_sandbox()
    tmp = tmp_path_factory.mktemp("demo")
    expected = build_demo_class(tmp / "submitted")
    rows = grade_class(tmp / "submitted", tmp / "out", COURSE_ROOT / "solutions", jobs=2, progress=False)
    return expected, {(r["student_id"], r["assignment_id"]): r for r in rows}, tmp / "out"


def test_every_solution_passes_its_hidden_tests(demo):
    """Does the student who submits the solutions get full marks on every assignment?"""
    _, rows, _ = demo
    for assignment in MISTAKES:
        row = rows[("correct", assignment)]
        assert row["status"] == "graded" and row["score"] == row["max_score"] != "0", row


def test_unchanged_release_scores_zero(demo):
    """Does an untouched release score 0 without crashing the grader?"""
    _, rows, _ = demo
    for assignment in MISTAKES:
        row = rows[("blank", assignment)]
        assert row["status"] == "graded" and row["score"] == "0", row


@pytest.mark.parametrize("student,assignment", MISTAKE_CASES)
def test_typical_mistake_gets_partial_marks_and_a_named_diagnosis(demo, student, assignment):
    """Does each typical mistake fail exactly its question, with feedback naming the mistake?"""
    expected, rows, out = demo
    row = rows[(student, assignment)]
    fails = expected[(student, assignment)]["fails"]
    assert 0 < float(row["score"]) < float(row["max_score"]), row
    assert set(row["failed"].split()) == set(fails), row
    page = html.unescape((out / "feedback" / student / f"{assignment}.html").read_text(encoding="utf-8"))
    for phrase in fails.values():
        assert phrase in page
    assert "BEGIN HIDDEN TESTS" not in page


def test_exercises_are_generated_from_solutions():
    """Is every notebook in exercises/ what nbgrader generates from solutions/ now?"""
    assert stale() == [], "run: python -m autograder release"


def test_plain_nbgrader_workflow(tmp_path):
    """Do generate_assignment, autograde, generate_feedback and export work with the course's
    config, give the correct submission full marks (warnings and all), and keep hidden tests out
    of feedback?"""
    root = course_copy(tmp_path / "course")
    assignment = sorted(MISTAKES)[0]
    nbgrader(root, "generate_assignment", assignment)
    build_demo_class(tmp_path / "demo")
    notebook = next((tmp_path / "demo" / "correct" / assignment).glob("*.ipynb"))
    target = root / "submitted" / "correct" / assignment / notebook.name
    target.parent.mkdir(parents=True)
    target.write_bytes(notebook.read_bytes())
    nbgrader(root, "autograde", assignment)
    nbgrader(root, "generate_feedback", assignment)
    nbgrader(root, "export", "--to", str(tmp_path / "grades.csv"))
    with open(tmp_path / "grades.csv", newline="") as f:
        row = next(r for r in csv.DictReader(f) if r["student_id"] == "correct")
    assert float(row["raw_score"]) == float(row["max_score"]) > 0, row
    page = next((root / "feedback" / "correct" / assignment).glob("*.html")).read_text(encoding="utf-8")
    assert "BEGIN HIDDEN TESTS" not in page


@pytest.mark.parametrize("assignment", sorted(MISTAKES))
def test_every_test_cell_reports_values_for_the_outside_recheck(sandbox, assignment):
    """Does every test cell of the solution report at least one checked value, so the grader can
    re-check it outside the learner's process (a cell that only finishes proves nothing)?"""
    _, source = load_sources(COURSE_ROOT / "solutions")[assignment]
    records = solution_records(source, sandbox, Limits())
    assert records and all(records.values()), {k: len(v) for k, v in records.items()}
