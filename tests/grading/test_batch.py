"""Does grading a class write one CSV row and one feedback page per submission, in parallel,
without touching the submissions?"""

import csv
import hashlib

import nbformat
import pytest

from autograder.grading import batch, cgroups, sandbox
from autograder.grading.batch import CSV_COLUMNS, SandboxUnavailable, grade_class

from .conftest import needs_sandbox, submission_of


def tree_digest(folder):
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.fixture
def small_class(source, tmp_path):
    """solutions/ with the tiny source, and a right, a wrong, a renamed and an empty submission."""
    solutions, submitted = tmp_path / "solutions", tmp_path / "submitted"
    (solutions / "ex01").mkdir(parents=True)
    nbformat.write(source, solutions / "ex01" / "ex01.ipynb")
    for student, name, answer in [
        ("ann", "ex01.ipynb", "def f():\n    return 1"),
        ("bob", "ex01.ipynb", "def f():\n    return 2"),
        ("cy", "my copy.ipynb", "def f():\n    return 1"),
    ]:
        (submitted / student / "ex01").mkdir(parents=True)
        nbformat.write(submission_of(source, answer), submitted / student / "ex01" / name)
    (submitted / "dee" / "ex01").mkdir(parents=True)
    return solutions, submitted


@needs_sandbox
def test_class_is_graded_into_csv_and_feedback(small_class, tmp_path):
    """Do a right, a wrong, a renamed and an empty submission each get a row and a status?"""
    solutions, submitted = small_class
    out = tmp_path / "out"
    before = tree_digest(submitted)
    rows = grade_class(submitted, out, solutions, jobs=2, progress=False)
    assert [(r["student_id"], r["score"], r["status"]) for r in rows] == [
        ("ann", "2", "graded"),
        ("bob", "0", "graded"),
        ("cy", "2", "graded"),
        ("dee", "0", "no notebook"),
    ]
    assert rows[1]["failed"] == "q1_check"
    with open(out / "grades.csv", newline="") as f:
        assert list(csv.DictReader(f)) == rows and rows[0].keys() == set(CSV_COLUMNS)
    assert sorted(p.parent.name for p in (out / "feedback").rglob("*.html")) == ["ann", "bob", "cy", "dee"]
    assert tree_digest(submitted) == before


def test_without_a_sandbox_grading_is_refused(small_class, tmp_path, monkeypatch):
    """Where bubblewrap cannot run, is grading refused with the reason (nothing written), unless
    the instructor asks for --no-sandbox, whose statuses then say so?"""
    solutions, submitted = small_class
    monkeypatch.setattr(batch, "sandbox_problem", lambda: "bubblewrap is not installed")
    with pytest.raises(SandboxUnavailable, match="bubblewrap is not installed"):
        grade_class(submitted, tmp_path / "out", solutions, jobs=1, progress=False)
    assert not (tmp_path / "out").exists()
    rows = grade_class(submitted, tmp_path / "out", solutions, jobs=1, progress=False, sandboxed=False)
    assert [(r["student_id"], r["score"], r["status"]) for r in rows] == [
        ("ann", "2", "graded (no sandbox)"),
        ("bob", "0", "graded (no sandbox)"),
        ("cy", "2", "graded (no sandbox)"),
        ("dee", "0", "no notebook (no sandbox)"),
    ]


@needs_sandbox
def test_a_sandbox_that_cannot_start_stops_grading_with_its_reason(small_class, tmp_path, monkeypatch):
    """When bwrap cannot start the fork server, is grading refused with bwrap's own words, rather
    than every submission marked "not graded: the solution fails its own tests"?"""
    solutions, submitted = small_class
    original = sandbox.bwrap_command  # ends with: python -m autograder.grading.forkserver
    monkeypatch.setattr(sandbox, "bwrap_command", lambda limits: [*original(limits)[:-3], "/no/such/python"])
    with pytest.raises(SandboxUnavailable, match="execvp /no/such/python"):
        grade_class(submitted, tmp_path / "out", solutions, jobs=1, progress=False)
    assert not (tmp_path / "out" / "grades.csv").exists()


@needs_sandbox
def test_the_grade_command_says_when_memory_is_bounded_per_process_only(small_class, tmp_path, monkeypatch, capsys):
    """Where no memory cgroup can be made (not root, or a read-only controller), does `grade` tell
    the instructor that --memory-limit bounds each process alone, and still grade?"""
    from autograder.__main__ import main

    solutions, submitted = small_class
    monkeypatch.setattr(cgroups, "memory_cgroup_available", lambda: False)
    assert (
        main(["grade", str(submitted), "--solutions", str(solutions), "--out", str(tmp_path / "out"), "--jobs", "1"])
        == 0
    )
    said = capsys.readouterr().out
    assert "no memory cgroup" in said and "bounds each process of a submission alone" in said
    assert (tmp_path / "out" / "grades.csv").exists()
