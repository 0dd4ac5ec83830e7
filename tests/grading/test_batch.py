"""Does grading a class write one CSV row and one feedback page per submission, in parallel,
without touching the submissions?"""
import csv
import hashlib

import nbformat

from autograder.grading.batch import CSV_COLUMNS, grade_class

from .conftest import submission_of


def tree_digest(folder):
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_class_is_graded_into_csv_and_feedback(source, tmp_path):
    """Do a right, a wrong, a renamed and an empty submission each get a row and a status?"""
    solutions, submitted, out = tmp_path / "solutions", tmp_path / "submitted", tmp_path / "out"
    (solutions / "ex01").mkdir(parents=True)
    nbformat.write(source, solutions / "ex01" / "ex01.ipynb")
    for student, name, answer in [("ann", "ex01.ipynb", "def f():\n    return 1"),
                                  ("bob", "ex01.ipynb", "def f():\n    return 2"),
                                  ("cy", "my copy.ipynb", "def f():\n    return 1")]:
        (submitted / student / "ex01").mkdir(parents=True)
        nbformat.write(submission_of(source, answer), submitted / student / "ex01" / name)
    (submitted / "dee" / "ex01").mkdir(parents=True)
    before = tree_digest(submitted)
    rows = grade_class(submitted, out, solutions, jobs=2, progress=False)
    assert [(r["student_id"], r["score"], r["status"]) for r in rows] == [
        ("ann", "2", "graded"), ("bob", "0", "graded"), ("cy", "2", "graded"), ("dee", "0", "no notebook")]
    with open(out / "grades.csv", newline="") as f:
        assert list(csv.DictReader(f)) == rows and rows[0].keys() == set(CSV_COLUMNS)
    assert sorted(p.parent.name for p in (out / "feedback").rglob("*.html")) == ["ann", "bob", "cy", "dee"]
    assert tree_digest(submitted) == before
