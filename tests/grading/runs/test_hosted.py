"""Does one notebook graded by `grade-one` in Gradescope's and PrairieLearn's layouts, through the
scripts those platforms run, get the score a class run gives it, in each platform's results.json,
with hidden tests' outputs hidden?"""

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.__main__ import main
from autograder.grading.runs import hosted
from autograder.grading.runs.batch import grade_class

from ..classes import SMALL_CLASS, write_class
from ..conftest import needs_sandbox, tiny_source

DEPLOY = Path(hosted.__file__).parents[1] / "deploy"
REPO = Path(hosted.__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def graded_class(tmp_path_factory, request):
    """The small class graded by a class run, and a course folder (solutions/ and refs.json) as a
    hosted grader's image holds it."""
    request.getfixturevalue("sandbox_available")
    root = tmp_path_factory.mktemp("hosted")
    solutions, submitted = write_class(tiny_source(), root, SMALL_CLASS)
    grade_class(submitted, root / "out", solutions, jobs=2, progress=False)
    with open(root / "out" / "grades.csv", newline="") as f:
        rows = {(r["student_id"], r["assignment_id"]): r for r in csv.DictReader(f)}
    course = root / "course"
    shutil.copytree(solutions, course / "solutions")
    assert main(["references", "--solutions", str(course / "solutions"), "--out", str(course / "refs.json")]) == 0
    return submitted, course, rows


def _run(script: Path, env: dict, *args: str) -> None:
    env = dict(os.environ, PYTHON=sys.executable, PYTHONPATH=str(REPO), **env)
    done = subprocess.run(["bash", str(script), *args], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr


@needs_sandbox
def test_gradescope_run_autograder_writes_the_class_runs_score(graded_class, tmp_path):
    """Run as Gradescope runs it (the submission in /autograder/submission, results expected in
    /autograder/results/results.json), does run_autograder give the class run's score, one test
    per question, and hide what a failed hidden test checked?"""
    submitted, course, rows = graded_class
    (course / "assignment_id").write_text("ex01\n")
    root = tmp_path / "autograder"
    shutil.copytree(submitted / "bob" / "ex01", root / "submission")
    _run(DEPLOY / "gradescope" / "run_autograder", {"GRADESCOPE_ROOT": str(root), "COURSE_DIR": str(course)})
    results = json.loads((root / "results" / "results.json").read_text())
    assert results["score"] == float(rows[("bob", "ex01")]["score"]) == 0
    assert [(t["name"], t["score"], t["max_score"], t["visibility"]) for t in results["tests"]] == [
        ("Question 1 (q1_check)", 0.0, 2.0, "visible")
    ]
    # bob's f() returns 2: the visible check passes, the hidden one fails; its hint stays hidden
    assert results["tests"][0]["output"] == hosted.HIDDEN_OUTPUT
    assert "should be 1" not in json.dumps(results)
    assert (root / "results" / "feedback.html").is_file()


@needs_sandbox
def test_prairielearn_entrypoint_writes_the_class_runs_score(graded_class, tmp_path):
    """Run as PrairieLearn's external grader runs it (/grade/student, /grade/data/data.json in,
    /grade/results/results.json out), does the entrypoint give the class run's score as a
    fraction, with points per question, and mark a submission with no notebook not gradable?"""
    submitted, course, rows = graded_class
    env = {"PL_GRADE_ROOT": str(tmp_path / "grade"), "COURSE_DIR": str(course)}
    shutil.copytree(submitted / "ann" / "ex01", tmp_path / "grade" / "student")
    (tmp_path / "grade" / "data").mkdir()
    (tmp_path / "grade" / "data" / "data.json").write_text(json.dumps({"params": {"assignment": "ex01"}}))
    _run(DEPLOY / "prairielearn" / "entrypoint", env)
    results = json.loads((tmp_path / "grade" / "results" / "results.json").read_text())
    assert results["gradable"] is True
    assert results["score"] * 2 == float(rows[("ann", "ex01")]["score"]) == 2
    assert [(t["points"], t["max_points"], t["message"]) for t in results["tests"]] == [
        (2.0, 2.0, "All checks passed.")
    ]
    shutil.rmtree(tmp_path / "grade")
    shutil.copytree(submitted / "cy" / "ex02", tmp_path / "grade" / "student")  # an empty folder
    _run(DEPLOY / "prairielearn" / "entrypoint", env, "ex02")
    results = json.loads((tmp_path / "grade" / "results" / "results.json").read_text())
    assert rows[("cy", "ex02")]["status"] == "no notebook"
    assert results["gradable"] is False and results["score"] == 0 and "no notebook" in results["format_errors"][0]


def test_hidden_check_names_are_those_only_a_hidden_region_makes(source):
    """Are the checks named only inside a test cell's hidden region the hidden ones?"""
    assert hosted.hidden_check_names(source) == {"q1_check": {"f()"}}


def test_grade_one_refuses_an_unknown_assignment_with_the_known_ones(graded_class, tmp_path, capsys):
    """Does grade-one name the assignments it knows when asked for another, and write nothing?"""
    submitted, course, _ = graded_class
    out = tmp_path / "results.json"
    args = ["grade-one", str(submitted / "ann" / "ex01"), "--assignment", "ex09", "--json", str(out)]
    assert main([*args, "--solutions", str(course / "solutions")]) == 2
    said = capsys.readouterr().err
    assert "no assignment 'ex09'" in said and "(it has: ex01, ex02)" in said
    assert not out.exists()


def test_a_notebook_where_nothing_ran_is_not_reported_to_the_platform_as_passed():
    """Gradescope shows each test's output to the student: for a submission where nothing ran
    (no notebook), does every question say it was not graded and why, not "All checks passed."?"""
    source = tiny_source()
    result = hosted.Result("ada", "ex01", "no notebook", [hosted.QuestionResult("q1_check", 2)])
    tests = hosted.gradescope(result, source)["tests"]
    assert [t["output"] for t in tests] == ["not graded: no notebook"] and tests[0]["score"] == 0


def test_prairielearns_results_for_a_notebook_where_nothing_ran_say_why():
    source = tiny_source()
    result = hosted.Result("ada", "ex01", "no notebook", [hosted.QuestionResult("q1_check", 2)])
    assert [t["message"] for t in hosted.prairielearn(result, source)["tests"]] == ["not graded: no notebook"]
