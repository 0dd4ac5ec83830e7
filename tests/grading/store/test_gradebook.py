"""Is nbgrader's gradebook the store: the structure generate_assignment records, one submission
per transaction, manual grades kept, late penalties from nbgrader's plugin, one writer at a time?"""

import os
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook, MissingEntry

from autograder.compare.causes import split_cause_line
from autograder.grading.judge.grade_one import QuestionResult, Result
from autograder.grading.nbgrader_glue.cli import nbgrader
from autograder.grading.store import gradebook as gradebook_module
from autograder.grading.store.config import course_config
from autograder.grading.store.gradebook import Store, StoreBusy
from autograder.grading.store.views import grade_rows


def result(student, score, message="", cause="", status="graded", assignment="ex01"):
    q = QuestionResult("q1_check", 2.0, score, message, cause)
    return Result(student, assignment, status, [q])


@pytest.fixture
def store(tmp_path, source):
    with Store(f"sqlite:///{tmp_path}/gradebook.db") as s:
        s.prepare("ex01", "ex01.ipynb", source)
        yield s


def test_the_structure_is_what_generate_assignment_records(tmp_path, source):
    """Are the notebook's grade, solution and source cells (points, sources, checksums) those
    `nbgrader generate_assignment` enters for the same source?"""
    course = tmp_path / "course"
    (course / "source" / "ex01").mkdir(parents=True)
    nbformat.write(source, course / "source" / "ex01" / "ex01.ipynb")
    (course / "nbgrader_config.py").write_text(
        f"c = get_config()\nc.CourseDirectory.root = {str(course)!r}\n", encoding="utf-8"
    )
    nbgrader(course, "generate_assignment", "ex01", f"--CourseDirectory.db_url=sqlite:///{tmp_path}/theirs.db")
    with Store(f"sqlite:///{tmp_path}/ours.db", course_config(course)) as ours:
        ours.prepare("ex01", "ex01.ipynb", source)

    def cells(url):
        with Gradebook(url) as gb:
            nb = gb.find_notebook("ex01", "ex01")
            return (
                sorted((c.name, c.max_score, c.cell_type) for c in nb.grade_cells),
                sorted(c.name for c in nb.solution_cells),
                sorted((c.name, c.source, c.checksum, c.locked) for c in nb.source_cells),
            )

    assert cells(f"sqlite:///{tmp_path}/ours.db") == cells(f"sqlite:///{tmp_path}/theirs.db")


def test_a_graded_submission_is_in_nbgraders_tables(store, tmp_path):
    """Are the score, maximum, timestamp, status and the failure message with its cause key where
    nbgrader (and formgrader) read them?"""
    when = datetime(2026, 1, 20, 17, 5)
    recorded = store.record(result("ann", 0.0, "f() should be 1", "accumulation.not_zeroed"), "ex01.ipynb", when)
    assert (recorded.old, recorded.new) == (None, 0.0)
    with Gradebook(f"sqlite:///{tmp_path}/gradebook.db") as gb:
        sub = gb.find_submission("ex01", "ann")
        assert sub.timestamp == when and sub.score == 0 and sub.max_score == 2
        grade = gb.find_grade("q1_check", "ex01", "ex01", "ann")
        assert (grade.auto_score, grade.manual_score, grade.needs_manual_grade) == (0.0, None, False)
        (comment,) = [c for c in sub.notebooks[0].comments if c.name == "q1_check"]
        assert comment.auto_comment == "f() should be 1\n[cause: accumulation.not_zeroed]"
        assert gb.find_comment("q1_answer", "ex01", "ex01", "ann").auto_comment is None  # formgrader's box
    assert grade_rows(store)[0]["status"] == "graded"


def test_the_comment_is_read_back_as_the_class_report_reads_it(store):
    """Does each failed cell's autograder comment split back into its message and cause key with
    `causes.split_cause_line` (what the class report reads), and a passed cell have none?"""
    store.record(result("ann", 0.0, "f() should be 1", "accumulation.not_zeroed"), "ex01.ipynb", None)
    store.record(result("bob", 2.0), "ex01.ipynb", None)
    comments = {
        sub.student_id: [c.auto_comment for nb in sub.notebooks for c in nb.comments if c.name == "q1_check"]
        for sub in store.gb.find_assignment("ex01").submissions
    }
    assert split_cause_line(comments["ann"][0]) == ("f() should be 1", "accumulation.not_zeroed")
    assert comments["bob"] == [None]


def test_a_regrade_replaces_its_own_result_and_keeps_a_manual_grade(store, tmp_path):
    """Does grading a submission again replace the autograder's score (old -> new reported),
    while a manual score and comment given in formgrader stay, flagged for review?"""
    store.record(result("ann", 0.0, "wrong"), "ex01.ipynb", None)
    store.record(result("bob", 2.0), "ex01.ipynb", None)
    with Gradebook(f"sqlite:///{tmp_path}/gradebook.db") as gb:  # the instructor, in formgrader
        grade = gb.find_grade("q1_check", "ex01", "ex01", "ann")
        grade.manual_score = 1.5
        gb.find_comment("q1_answer", "ex01", "ex01", "ann").manual_comment = "close"
        gb.db.commit()
    store.gb.db.expire_all()
    bob_before = [r for r in grade_rows(store) if r["student_id"] == "bob"]
    recorded = store.record(result("ann", 2.0), "ex01.ipynb", None)
    assert (recorded.old, recorded.new) == (1.5, 1.5)  # the manual score wins, as in nbgrader
    with Gradebook(f"sqlite:///{tmp_path}/gradebook.db") as gb:
        grade = gb.find_grade("q1_check", "ex01", "ex01", "ann")
        assert (grade.auto_score, grade.manual_score, grade.needs_manual_grade) == (2.0, 1.5, True)
        assert gb.find_comment("q1_answer", "ex01", "ex01", "ann").manual_comment == "close"
        assert len(gb.find_assignment("ex01").submissions) == 2
    assert [r for r in grade_rows(store) if r["student_id"] == "bob"] == bob_before


def test_a_failed_write_leaves_nothing_half_written(store, tmp_path, monkeypatch):
    """When writing a submission fails midway, is none of it in the store (one transaction)?"""
    monkeypatch.setattr(gradebook_module, "Status", None)  # db.merge(None(...)) raises after the grades
    with pytest.raises(TypeError):
        store.record(result("ann", 2.0), "ex01.ipynb", None)
    with Gradebook(f"sqlite:///{tmp_path}/gradebook.db") as gb, pytest.raises(MissingEntry):
        gb.find_submission("ex01", "ann")


def test_a_batch_of_submissions_is_written_whole_or_not_at_all(store, tmp_path, monkeypatch):
    """Are the submissions of one ``record_all`` all in the store after it, and, when writing the
    last of them fails, none of them (the batch is one transaction; earlier batches stay)?"""
    store.record(result("ann", 2.0), "ex01.ipynb", None)
    recorded = store.record_all([(result(s, 2.0), "ex01.ipynb", None) for s in ("bob", "cy")])
    assert [(r.old, r.new) for r in recorded] == [(None, 2.0), (None, 2.0)]
    write = Store._write

    def fail_on_eve(self, result, notebook_file, timestamp):
        if result.student_id == "eve":
            raise RuntimeError("the disk is full")
        return write(self, result, notebook_file, timestamp)

    monkeypatch.setattr(Store, "_write", fail_on_eve)
    with pytest.raises(RuntimeError):
        store.record_all([(result(s, 1.0), "ex01.ipynb", None) for s in ("ann", "dee", "eve")])
    with Gradebook(f"sqlite:///{tmp_path}/gradebook.db") as gb:
        assert sorted(s.student.id for s in gb.find_assignment("ex01").submissions) == ["ann", "bob", "cy"]
        assert gb.find_submission("ex01", "ann").score == 2.0  # not the failed batch's 1.0


def test_a_late_submission_is_penalised_by_the_courses_nbgrader_plugin(tmp_path, source):
    """With nbgrader's own `LateSubmissionPlugin.penalty_method = 'zero'` in the course's
    nbgrader_config.py, or an instructor's plugin class, is a late submission penalised (and an
    extension honoured), an on-time one not?"""
    course = tmp_path / "course"
    course.mkdir()
    (course / "halve.py").write_text(
        "from nbgrader.plugins import LateSubmissionPlugin\n"
        "class Halve(LateSubmissionPlugin):\n"
        "    def late_submission_penalty(self, student_id, score, total_seconds_late):\n"
        "        return score / 2\n",
        encoding="utf-8",
    )
    for config, late_score in [
        ("c.LateSubmissionPlugin.penalty_method = 'zero'", 0.0),
        (
            f"import sys; sys.path.insert(0, {str(course)!r}); import halve\n"
            "c.AssignLatePenalties.plugin_class = halve.Halve",
            1.0,
        ),
    ]:
        (course / "nbgrader_config.py").write_text(f"c = get_config()\n{config}\n", encoding="utf-8")
        url = f"sqlite:///{tmp_path}/{late_score}.db"
        with Store(url, course_config(course)) as s:
            s.prepare("ex01", "ex01.ipynb", source)
            s.set_duedate("ex01", "2026-01-20 17:00:00 UTC")
            assert s.record(result("late", 2.0), "ex01.ipynb", datetime(2026, 1, 20, 18)).new == late_score
            assert s.record(result("ontime", 2.0), "ex01.ipynb", datetime(2026, 1, 20, 16)).new == 2.0
            assert s.grant_extension("ex01", "late", hours=2).new == 2.0  # the penalty goes at once
            assert s.record(result("late", 2.0), "ex01.ipynb", datetime(2026, 1, 20, 18)).new == 2.0
            rows = {r["student_id"]: r for r in grade_rows(s)}
            assert rows["late"]["late_penalty"] == "0" and rows["ontime"]["timestamp"] == "2026-01-20 16:00:00"


def test_an_extension_too_short_to_remove_a_penalty_says_so(tmp_path, source):
    """Given 2 h more for a submission 5 h late under a zero penalty, does `extension` say that it
    is still 3 h late and keeps its penalty (score 0 → 0 alone reads like a mistake)?"""
    course = tmp_path / "course"
    course.mkdir()
    (course / "nbgrader_config.py").write_text(
        "c = get_config()\nc.LateSubmissionPlugin.penalty_method = 'zero'\n", encoding="utf-8"
    )
    url = f"sqlite:///{course}/gradebook.db"
    with Store(url, course_config(course)) as s:
        s.prepare("ex01", "ex01.ipynb", source)
        s.set_duedate("ex01", "2026-01-20 17:00:00 UTC")
        s.record(result("late", 2.0), "ex01.ipynb", datetime(2026, 1, 20, 22))
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    command = [sys.executable, "-m", "autograder", "extension", "ex01", "late", "--course", str(course)]
    short = subprocess.run(
        [*command, "--hours", "2", "--out", str(tmp_path / "o")], capture_output=True, text=True, env=env
    )
    assert short.returncode == 0, short.stderr
    assert "score 0 → 0" in short.stdout
    assert "still 3 h late with this extension (submitted 5 h after the due date without it)" in short.stdout
    assert "penalty (2 points) still applies" in short.stdout
    enough = subprocess.run(
        [*command, "--hours", "6", "--out", str(tmp_path / "o")], capture_output=True, text=True, env=env
    )
    assert "score 0 → 2" in enough.stdout and "still" not in enough.stdout


def test_a_second_writer_on_a_sqlite_gradebook_is_refused(store, tmp_path):
    """Does a second grade run on the same gradebook.db refuse with a message naming the holder,
    in this process and in another one?"""
    with pytest.raises(StoreBusy, match=r"another grade run \(pid \d+\) is writing to .*gradebook.db"):
        Store(f"sqlite:///{tmp_path}/gradebook.db")
    other = subprocess.run(
        [
            sys.executable,
            "-c",
            f"from autograder.grading.store.gradebook import Store; Store('sqlite:///{tmp_path}/gradebook.db')",
        ],
        capture_output=True,
        text=True,
    )
    assert other.returncode != 0 and "StoreBusy: another grade run" in other.stderr


def test_a_student_added_by_another_writer_meanwhile_is_found(store, monkeypatch):
    """On a server gradebook shared by shards, when another writer adds the same student between
    our look-up and our insert, is that student used rather than the write failing?"""
    other = Gradebook(store.db_url)  # a second connection, as a second machine would have
    real_find = store.gb.find_student
    calls = []

    def find_then_race(student_id):
        if not calls:
            calls.append(student_id)
            other.add_student(student_id)  # the other shard wins the race
            raise MissingEntry(student_id)
        return real_find(student_id)

    monkeypatch.setattr(store.gb, "find_student", find_then_race)
    assert store.record(result("ann", 2.0), "ex01.ipynb", None).new == 2.0
    other.close()


def test_a_new_gradebook_gets_the_version_nbgrader_gives_it(tmp_path):
    """Is a gradebook the store creates versioned with the revision nbgrader's own `alembic heads`
    gives (found in-process, without nbgrader's subprocess), so `nbgrader db upgrade` knows it?"""
    from nbgrader.api import get_alembic_version
    from sqlalchemy import text

    with Store(f"sqlite:///{tmp_path}/gradebook.db") as s:
        (stored,) = s.gb.db.execute(text("SELECT version_num FROM alembic_version")).one()
    assert stored == get_alembic_version()
