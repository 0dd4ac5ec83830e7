"""Does each command say what to do, and change nothing, when what it is asked for is not there: a
course with nothing collected, a learner or an assignment with no submission (grading, regrading,
extension), a gradebook with nothing to export? And does `grade` say so when its OUT held another
gradebook's results (the demo class's and a course's both default to grading-output/)?"""

import csv
import re
import shutil
import zipfile

import nbformat
import pytest

from autograder.__main__ import main
from autograder.commands.grade import _other_gradebooks_output, _own_output, _replaced_note
from autograder.grading.judge.grade_one import QuestionResult, Result
from autograder.grading.store import default_db_url
from autograder.grading.store.gradebook import Store
from autograder.lessons import COURSE_ROOT

from ..grading.conftest import submission_of, tiny_source


def _outputs(out):
    """Every file under ``out`` with its bytes: what a refused command must leave as it was."""
    return {p: p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


@pytest.fixture
def source():
    return tiny_source()


@pytest.fixture
def graded(tmp_path, source):
    """A course-like OUT: a gradebook where ada and bob handed in ex01 (a tiny source) and ada ex02,
    with grades.csv and a report beside it (stand-ins: a refused command must not touch them)."""
    out = tmp_path / "out"
    out.mkdir()
    url = default_db_url(out)
    with Store(url) as store:
        for assignment in ("ex01", "ex02"):
            store.prepare(assignment, f"{assignment}.ipynb", source)
        for student, assignment in (("ada", "ex01"), ("bob", "ex01"), ("ada", "ex02")):
            result = Result(student, assignment, "graded", [QuestionResult("q1_check", 2.0, 2.0)])
            store.record(result, f"{assignment}.ipynb", None)
    for name in ("grades.csv", "report.html", "report.csv"):
        (out / name).write_text(f"{name} as the last run wrote it\n", encoding="utf-8")
    return out, url


def test_grading_a_course_with_nothing_collected_says_how_learners_submit(tmp_path, capsys):
    course = tmp_path / "course"
    shutil.copytree(COURSE_ROOT / "solutions", course / "solutions")
    assert main(["grade", "--course", str(course), "--out", str(tmp_path / "out")]) == 1
    said = capsys.readouterr()
    assert f"nothing to grade: nothing collected yet ({course}/submitted/ does not exist)" in said.err
    assert "nbgrader submit ASSIGNMENT" in said.err and "nbgrader collect ASSIGNMENT" in said.err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("asked", "named"),
    [
        (["--student", "carol"], "no submission of carol in"),
        (["--assignment", "ex09"], "no submission for ex09 in"),
        (["--student", "bob", "--assignment", "ex02"], "no submission of bob for ex02 in"),
    ],
)
def test_grading_a_learner_or_assignment_with_no_submission_names_it_and_changes_nothing(
    tmp_path, graded, source, asked, named, capsys
):
    """`grade --student carol` (a regrade of a learner who handed nothing in): is it refused,
    naming carol and what SUBMITTED holds, with exit status 1 and grades.csv, the report and the
    gradebook left as they were (before, it said "No submissions found" and rewrote them)?"""
    out, _ = graded
    submitted, solutions = tmp_path / "submitted", tmp_path / "solutions"
    for student, assignment in (("ada", "ex01"), ("bob", "ex01"), ("ada", "ex02")):
        (submitted / student / assignment).mkdir(parents=True)
        answered = submission_of(source, "def f():\n    return 1")
        nbformat.write(answered, submitted / student / assignment / f"{assignment}.ipynb")
    for assignment in ("ex01", "ex02"):
        (solutions / assignment).mkdir(parents=True)
        nbformat.write(source, solutions / assignment / f"{assignment}.ipynb")
    before = _outputs(out)
    command = ["grade", str(submitted), "--out", str(out), "--solutions", str(solutions), *asked]
    assert main(command) == 1
    said = capsys.readouterr()
    assert f"nothing to grade: {named} {submitted}/ (it holds ada/ex01, ada/ex02, bob/ex01)" in said.err
    assert "nothing was changed" in said.err
    assert _outputs(out) == before


def test_an_extension_for_a_learner_with_no_submission_names_who_has_one(graded, capsys):
    out, _ = graded
    before = _outputs(out)
    assert main(["extension", "ex02", "bob", "--hours", "24", "--out", str(out)]) == 1
    assert "error: no submission of ex02 by bob in the gradebook (handed in by ada); nothing was changed" in (
        capsys.readouterr().err
    )
    assert main(["extension", "ex09", "bob", "--hours", "24", "--out", str(out)]) == 1
    assert "error: no assignment ex09 in the gradebook (it has ex01, ex02)" in capsys.readouterr().err
    assert _outputs(out) == before


def test_exporting_a_gradebook_with_nothing_graded_says_so_and_writes_nothing(tmp_path, source, capsys):
    url = default_db_url(tmp_path)
    with Store(url) as store:
        store.prepare("ex01", "ex01.ipynb", source)
    assert main(["export", "--db", url, "--out", str(tmp_path / "exports")]) == 1
    assert "nothing to export" in capsys.readouterr().err and not (tmp_path / "exports").exists()


def test_a_run_into_another_gradebooks_output_names_the_one_it_replaces(tmp_path):
    out = tmp_path / "grading-output"
    demo = f"sqlite:///{out.resolve()}/gradebook.db"
    course = "sqlite:///course/gradebook.db"
    assert _other_gradebooks_output(out, None) is None and not out.exists()  # reading writes nothing
    out.mkdir()
    _own_output(out, None)  # the demo class graded
    assert _other_gradebooks_output(out, None) is None  # the demo class again: the same gradebook
    assert _other_gradebooks_output(out, course) == demo
    # the course's run replaced the demo class's results, and then the demo class the course's:
    # each note names the gradebook it replaced, and only the demo's is called the demo's
    assert "such as the demo class" in _replaced_note(out, demo)
    assert course in _replaced_note(out, course) and "demo" not in _replaced_note(out, course)
    _own_output(out, course)
    assert _other_gradebooks_output(out, course) is None


def test_a_late_submission_without_a_penalty_says_late_in_grades_table_and_csv(tmp_path, source, capsys):
    """Under nbgrader's default late policy (none), a submission 36 h after its due date keeps its
    score: does `grade`'s table (and grades.csv's late column) still say it came late, and how late,
    rather than nothing?"""
    submitted, solutions, out = tmp_path / "submitted", tmp_path / "solutions", tmp_path / "out"
    (solutions / "ex01").mkdir(parents=True)
    nbformat.write(source, solutions / "ex01" / "ex01.ipynb")
    (submitted / "ada" / "ex01").mkdir(parents=True)
    nbformat.write(submission_of(source, "def f():\n    return 1"), submitted / "ada" / "ex01" / "ex01.ipynb")
    (submitted / "ada" / "ex01" / "timestamp.txt").write_text("2026-01-22 05:00:00.000000 UTC", encoding="utf-8")
    command = ["grade", str(submitted), "--out", str(out), "--solutions", str(solutions), "--no-progress"]
    assert main([*command, "--duedate", "ex01=2026-01-20 17:00:00 UTC"]) == 0
    table = capsys.readouterr().out
    assert re.search(r"^ada\s+ex01\s+2\s+2\s+late \(36 h, no penalty\)\s+graded", table, re.M), table
    with open(out / "grades.csv", newline="", encoding="utf-8") as f:
        (row,) = csv.DictReader(f)
    assert (row["score"], row["late_penalty"], row["late"]) == ("2", "0", "late (36 h, no penalty)")


def test_a_zip_of_a_course_of_several_assignments_needs_the_lms_assignment(tmp_path, capsys):
    """A learner names their own file in an LMS download: with several assignments in the course, is
    ``grade --from-zip`` without ``--assignment`` refused before anything is read, saying why?"""
    archive = tmp_path / "canvas.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("evil_200_1_ex02_leaves.ipynb", "{}")
    assert main(["grade", "--from-zip", str(archive), "--out", str(tmp_path / "out")]) == 2
    assert "--from-zip needs --assignment ID" in capsys.readouterr().err
