"""Does grading a class write one CSV row and one feedback page per submission, in parallel,
without touching the submissions?"""

import csv
import hashlib
import signal
import sqlite3
import subprocess
import sys
import time
from contextlib import closing

import nbformat
import pytest

from autograder.grading.nbgrader_glue import cli as nbgrader_cli
from autograder.grading.nbgrader_glue.cli import nbgrader
from autograder.grading.runs import batch, warm
from autograder.grading.runs.batch import CSV_COLUMNS, SandboxUnavailable, grade_class
from autograder.grading.sandbox import cgroups
from autograder.grading.sandbox import container as sandbox

from ..conftest import needs_sandbox, submission_of


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
    notes = []
    rows = grade_class(submitted, out, solutions, jobs=2, progress=False, notes=notes)
    assert notes == ["cy/ex01: graded my copy.ipynb (expected ex01.ipynb)"]
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
    original = sandbox.bwrap_command  # ends with: python -m autograder.grading.sandbox.forkserver
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


def grade_cli(*args, **kwargs):
    """``python -m autograder grade ARGS`` in a subprocess (as the instructor runs it)."""
    return subprocess.run(
        [sys.executable, "-m", "autograder", "grade", *map(str, args)], capture_output=True, text=True, **kwargs
    )


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


@needs_sandbox
def test_a_regrade_and_a_late_submitter_keep_every_other_row(small_class, source, tmp_path):
    """After the class is graded, does regrading one student (`--student`) and grading a SUBMITTED
    that holds only a late submitter (with nbgrader's timestamp.txt) leave every other row of
    grades.csv unchanged byte for byte, replace the regraded row (saying old → new), and does
    `nbgrader export` of the same gradebook give grades.csv's numbers?"""
    solutions, submitted = small_class
    out, db = tmp_path / "out", f"sqlite:///{tmp_path}/gradebook.db"
    first = grade_cli(submitted, "--solutions", solutions, "--out", out, "--db", db, "--jobs", "2")
    assert first.returncode == 0, first.stderr[-2000:]
    before = (out / "grades.csv").read_text(encoding="utf-8").splitlines()

    nbformat.write(submission_of(source, "def f():\n    return 1"), submitted / "bob" / "ex01" / "ex01.ipynb")
    regrade = grade_cli(submitted, "--solutions", solutions, "--out", out, "--db", db, "--student", "bob")
    assert regrade.returncode == 0, regrade.stderr[-2000:]
    assert "regraded bob/ex01: 0 → 2" in regrade.stdout
    after = (out / "grades.csv").read_text(encoding="utf-8").splitlines()
    assert [line for line in after if not line.startswith("bob,")] == [b for b in before if not b.startswith("bob,")]
    assert [r["score"] for r in read_csv(out / "grades.csv") if r["student_id"] == "bob"] == ["2"]

    late = tmp_path / "late-submitted"
    (late / "eve" / "ex01").mkdir(parents=True)
    nbformat.write(submission_of(source, "def f():\n    return 1"), late / "eve" / "ex01" / "ex01.ipynb")
    (late / "eve" / "ex01" / "timestamp.txt").write_text("2026-01-21 09:00:00.000000 UTC", encoding="utf-8")
    lately = grade_cli(
        late, "--solutions", solutions, "--out", out, "--db", db, "--duedate", "ex01=2026-01-20 17:00:00 UTC"
    )
    assert lately.returncode == 0, lately.stderr[-2000:]
    rows = {r["student_id"]: r for r in read_csv(out / "grades.csv")}
    assert sorted(rows) == ["ann", "bob", "cy", "dee", "eve"]
    assert (out / "grades.csv").read_text(encoding="utf-8").splitlines()[:-1] == after
    assert rows["eve"]["timestamp"] == "2026-01-21 09:00:00" and rows["eve"]["score"] == "2"

    course = nbgrader_cli.course_copy(tmp_path / "course")
    nbgrader(course, "export", f"--CourseDirectory.db_url={db}", f"--to={tmp_path}/export.csv")
    exported = {r["student_id"]: r for r in read_csv(tmp_path / "export.csv")}
    assert {s: (float(r["score"]), float(r["max_score"])) for s, r in exported.items()} == {
        s: (float(r["score"]), float(r["max_score"])) for s, r in rows.items()
    }


@needs_sandbox
def test_a_run_killed_halfway_keeps_what_it_graded_and_a_rerun_completes_it(small_class, source, tmp_path):
    """When the grader is killed (SIGKILL) while a slow submission runs, is every submission
    finished before in the store, and does the same command, run again, grade the rest (the
    SQLite lock died with the grader)?"""
    solutions, submitted = small_class
    (submitted / "zz-slow" / "ex01").mkdir(parents=True)
    slow = submission_of(source, "import time\ntime.sleep(6)\n\ndef f():\n    return 1")
    nbformat.write(slow, submitted / "zz-slow" / "ex01" / "ex01.ipynb")
    out, db = tmp_path / "out", f"sqlite:///{tmp_path}/gradebook.db"
    args = [submitted, "--solutions", solutions, "--out", out, "--db", db, "--jobs", "1"]
    grader = subprocess.Popen([sys.executable, "-m", "autograder", "grade", *map(str, args)])

    def stored():  # read-only, as an onlooker would: never makes the gradebook's tables itself
        try:
            with closing(sqlite3.connect(f"file:{tmp_path / 'gradebook.db'}?mode=ro", uri=True)) as db_file:
                return {row[0] for row in db_file.execute("SELECT student_id FROM submitted_assignment")}
        except sqlite3.OperationalError:  # not made yet, or its tables not yet
            return set()

    deadline = time.monotonic() + 300
    while len(stored()) < 4 and time.monotonic() < deadline and grader.poll() is None:
        time.sleep(0.2)
    grader.send_signal(signal.SIGKILL)
    grader.wait()
    assert stored() == {"ann", "bob", "cy", "dee"}
    assert not (out / "grades.csv").exists()
    rerun = grade_cli(*args)
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    assert stored() == {"ann", "bob", "cy", "dee", "zz-slow"}
    assert [r["student_id"] for r in read_csv(out / "grades.csv")] == ["ann", "bob", "cy", "dee", "zz-slow"]


@needs_sandbox
def test_a_class_run_holds_a_few_notebooks_between_reading_and_recording(source, tmp_path, monkeypatch):
    """Grading 12 notebooks with one thread, are at most a few of them read and not yet recorded
    at any time (the reading stage runs ahead of the sandbox by a bounded window), and is every
    one recorded with its score?"""
    solutions, submitted = tmp_path / "solutions", tmp_path / "submitted"
    (solutions / "ex01").mkdir(parents=True)
    nbformat.write(source, solutions / "ex01" / "ex01.ipynb")
    for i in range(12):
        (submitted / f"s{i:02}" / "ex01").mkdir(parents=True)
        answer = f"def f():\n    return {1 if i % 2 else 2}"
        nbformat.write(submission_of(source, answer), submitted / f"s{i:02}" / "ex01" / "ex01.ipynb")
    held, most = [0], [0]
    prepare, record_all = warm.prepare_notebook, batch.Store.record_all

    def counted_prepare(*args):
        held[0] += 1
        most[0] = max(most[0], held[0])
        return prepare(*args)

    def counted_record_all(self, items):
        held[0] -= len(items)
        return record_all(self, items)

    monkeypatch.setattr(warm, "prepare_notebook", counted_prepare)
    monkeypatch.setattr(batch.Store, "record_all", counted_record_all)
    rows = grade_class(submitted, tmp_path / "out", solutions, jobs=1, progress=False)
    assert [r["score"] for r in rows] == ["0", "2"] * 6
    assert held[0] == 0 and most[0] <= 4


@needs_sandbox
def test_a_folder_of_several_renamed_notebooks_gets_a_note_naming_them(source, tmp_path):
    """A folder with two renamed notebooks grades none of them (which one was meant is not known):
    does the run say so, naming them, and is a notebook ending in .IPYNB graded like any other?"""
    solutions, submitted = tmp_path / "solutions", tmp_path / "submitted"
    (solutions / "ex01").mkdir(parents=True)
    nbformat.write(source, solutions / "ex01" / "ex01.ipynb")
    right = submission_of(source, "def f():\n    return 1")
    for student, names in [("eve", ["draft.ipynb", "final.ipynb"]), ("fay", ["EX01.IPYNB"])]:
        (submitted / student / "ex01").mkdir(parents=True)
        for name in names:
            nbformat.write(right, submitted / student / "ex01" / name)
    notes = []
    rows = grade_class(submitted, tmp_path / "out", solutions, jobs=1, progress=False, notes=notes)
    assert [(r["student_id"], r["score"], r["status"]) for r in rows] == [
        ("eve", "0", "no notebook"),
        ("fay", "2", "graded"),
    ]
    assert notes == [
        "eve/ex01: no notebook graded: 2 notebooks (draft.ipynb, final.ipynb), none named ex01.ipynb",
        "fay/ex01: graded EX01.IPYNB (expected ex01.ipynb)",
    ]
