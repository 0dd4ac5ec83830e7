"""Do the exports hold the store's grades in the shapes their importers read: a per-question CSV,
a per-student summary, and Canvas's gradebook import (header, Points Possible row, ids)?"""

import copy
import csv
from datetime import datetime

import pytest
from nbgrader.api import Gradebook

from autograder.__main__ import main
from autograder.grading.judge.grade_one import QuestionResult, Result
from autograder.grading.out.exports import CANVAS_ID_COLUMNS
from autograder.grading.store.gradebook import Store


def two_question_source(source):
    """The tiny source with a second test cell (1 point) after the first."""
    nb = copy.deepcopy(source)
    extra = copy.deepcopy(source.cells[3])
    extra.metadata.nbgrader.update(grade_id="q2_check", points=1)
    nb.cells.append(extra)
    return nb


@pytest.fixture
def graded_store(tmp_path, source):
    """A gradebook with ex01 and ex02 (2 + 1 points each): ann has both (ex02 late, penalised to
    zero by nbgrader's plugin), bob only ex01; a student whose first name starts a formula."""
    url = f"sqlite:///{tmp_path}/out/gradebook.db"
    (tmp_path / "out").mkdir()
    with Store(url) as store:
        for assignment in ("ex01", "ex02"):
            store.prepare(assignment, f"{assignment}.ipynb", two_question_source(source))
        store.set_duedate("ex02", "2026-01-20 17:00:00 UTC")
        store._late.plugin_inst.penalty_method = "zero"

        def record(student, assignment, scores, when=None, cause=""):
            qs = [QuestionResult("q1_check", 2.0, scores[0], "" if scores[0] else "f() should be 1")]
            qs.append(QuestionResult("q2_check", 1.0, scores[1]))
            qs[0].cause = cause
            store.record(Result(student, assignment, "graded", qs), f"{assignment}.ipynb", when)

        record("ann", "ex01", (2.0, 1.0))
        record("ann", "ex02", (2.0, 0.0), datetime(2026, 1, 21))
        record("bob", "ex01", (0.0, 1.0), cause="accumulation.not_zeroed")
        record("evil", "ex01", (2.0, 1.0))
    with Gradebook(url) as gb:
        gb.update_or_create_student("evil", first_name="Eve", last_name='=HYPERLINK("http://x")')
    return tmp_path / "out", url


def parsed(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.reader(f))


def test_the_exports_hold_every_grade_in_their_importers_shapes(graded_store, capsys):
    """Does `python -m autograder export` write a question per row, a student per row with the
    total, and a Canvas import whose first columns, Points Possible row and scores Canvas reads?"""
    out, url = graded_store
    assert main(["export", "--out", str(out), "--db", url]) == 0
    assert "canvas.csv" in capsys.readouterr().out

    with open(out / "questions.csv", newline="", encoding="utf-8") as f:
        questions = list(csv.DictReader(f))
    assert [(q["student_id"], q["assignment_id"], q["question"], q["score"], q["max_score"]) for q in questions][
        :4
    ] == [
        ("ann", "ex01", "q1_check", "2", "2"),
        ("ann", "ex01", "q2_check", "1", "1"),
        ("ann", "ex02", "q1_check", "2", "2"),
        ("ann", "ex02", "q2_check", "0", "1"),
    ]
    bob = [q for q in questions if q["student_id"] == "bob"]
    assert [(q["score"], q["status"], q["cause"]) for q in bob] == [
        ("0", "graded", "accumulation.not_zeroed"),
        ("1", "graded", ""),
    ]

    with open(out / "summary.csv", newline="", encoding="utf-8") as f:
        summary = {r["student_id"]: r for r in csv.DictReader(f)}
    late = "ex02 -2 (late, 7 h)"  # 7 h after the due date, penalised to zero
    assert summary["ann"] == {"student_id": "ann", "name": "", "ex01": "3", "ex02": "0", "total": "3", "late": late}
    assert summary["bob"] == {"student_id": "bob", "name": "", "ex01": "1", "ex02": "", "total": "1", "late": ""}

    canvas = parsed(out / "canvas.csv")
    assert canvas[0] == [*CANVAS_ID_COLUMNS, "ex01", "ex02"]
    assert canvas[1] == ["Points Possible", "", "", "", "", "3", "3"]
    by_login = {row[3]: row for row in canvas[2:]}
    assert by_login["ann"][5:] == ["3", "0"] and by_login["bob"][5:] == ["1", ""]
    assert by_login["evil"][0] == '\'=HYPERLINK("http://x"), Eve'  # never a formula
    for path in ("questions.csv", "summary.csv", "canvas.csv"):
        cells = [c for row in parsed(out / path) for c in row]
        assert not any(c.startswith(("=", "+", "@")) for c in cells), path


def test_a_late_submission_without_a_penalty_is_named_late_in_the_summary(graded_store, tmp_path):
    """Under nbgrader's default late policy (``none``) a late submission keeps its score: does
    summary.csv still say that it came late, and how late, rather than nothing?"""
    _, url = graded_store
    with Store(url) as store:  # ann's ex02 recorded again, with nbgrader's default plugin
        qs = [QuestionResult("q1_check", 2.0, 2.0), QuestionResult("q2_check", 1.0, 0.0)]
        store.record(Result("ann", "ex02", "graded", qs), "ex02.ipynb", datetime(2026, 1, 22, 5))
    assert main(["export", "--out", str(tmp_path / "none"), "--db", url]) == 0
    with open(tmp_path / "none" / "summary.csv", newline="", encoding="utf-8") as f:
        ann = next(r for r in csv.DictReader(f) if r["student_id"] == "ann")
    assert (ann["ex02"], ann["late"]) == ("2", "ex02 late (36 h, no penalty)")


def test_a_canvas_roster_gives_canvass_ids_and_assignment_columns(graded_store, tmp_path, capsys):
    """Given Canvas's own gradebook export, are its ID, SIS User ID and Section used for each
    student (matched on the SIS Login ID) and its assignment header `ex01 (1234)` kept, so the
    import updates that assignment, and is a student the roster does not name said aloud?"""
    out, url = graded_store
    roster = tmp_path / "canvas-export.csv"
    roster.write_text(
        "Student,ID,SIS User ID,SIS Login ID,Section,ex01 (1234),Current Score\n"
        "    Points Possible,,,,,3,(read only)\n"
        '"Lovelace, Ada",101,S-1,ann,Section A,,\n'
        '"Bobbs, Bob",102,S-2,bob,Section B,,\n',
        encoding="utf-8",
    )
    assert main(["export", "--out", str(out), "--db", url, "--canvas-roster", str(roster)]) == 0
    canvas = parsed(out / "canvas.csv")
    assert canvas[0] == [*CANVAS_ID_COLUMNS, "ex01 (1234)", "ex02"]
    rows = {row[3]: row for row in canvas[2:]}
    assert rows["ann"] == ["Lovelace, Ada", "101", "S-1", "ann", "Section A", "3", "0"]
    assert rows["evil"][1:4] == ["", "", "evil"]  # not in Canvas's roster: matched by login only
    notes = [line for line in capsys.readouterr().out.splitlines() if line.startswith("note:")]
    assert len(notes) == 1 and "is not in canvas-export.csv" in notes[0] and "\x1b" not in notes[0]


def test_an_id_the_canvas_roster_gives_two_people_matches_neither(graded_store, tmp_path, capsys):
    """An instructor's messy export: bob's login is also another learner's Canvas ID, and ann is
    listed twice under two names. Is neither filled from a guess (their rows carry no Canvas id),
    with one line each naming both rows?"""
    out, url = graded_store
    roster = tmp_path / "canvas-export.csv"
    roster.write_text(
        "Student,ID,SIS User ID,SIS Login ID,Section\n"
        '"Lovelace, Ada",101,S-1,ann,A\n"Other, Ann",103,S-3,ann,A\n'
        '"Bobbs, Bob",102,S-2,bob,B\n"Someone, Else",bob,S-9,else,B\n',
        encoding="utf-8",
    )
    assert main(["export", "--out", str(out), "--db", url, "--canvas-roster", str(roster)]) == 0
    rows = {row[3]: row for row in parsed(out / "canvas.csv")[2:]}
    assert rows["ann"][1:3] == ["", ""] and rows["bob"][1:3] == ["", ""]
    notes = [line for line in capsys.readouterr().out.splitlines() if "matches different people" in line]
    assert len(notes) == 2 and "Lovelace, Ada" in notes[0] and "Other, Ann" in notes[0]
    assert "Bobbs, Bob" in notes[1] and "Someone, Else" in notes[1]


def test_an_export_without_a_gradebook_says_so(tmp_path, capsys):
    assert main(["export", "--out", str(tmp_path / "nothing")]) == 2
    assert "no gradebook at" in capsys.readouterr().err
