"""Does the service grade what the exchange receives as ``grade --course`` grades it, hand the page
back where ``fetch_feedback`` finds it, and apply the attempt rules (limit, which attempt counts,
cooldown, extra attempts, a grader error that uses none)?

The learners submit through nbgrader's own ``ExchangeSubmit`` in this process (``exchange.Course``);
the service runs its turns here (``Service.step``), with a real sandbox. Folders belong to the
user running the tests, so owners are not checked here (``tests/hub/`` checks them with real
accounts).
"""

import os
import shutil
import time
from contextlib import contextmanager
from datetime import UTC, datetime

import pytest
from nbgrader.utils import parse_utc

from autograder.__main__ import main
from autograder.grading.runs import saved_references as saving
from autograder.grading.runs import warm
from autograder.grading.runs.saved_references import SavedReferences
from autograder.grading.service import loop, view
from autograder.grading.service.loop import Service
from autograder.grading.service.settings import Rules
from autograder.grading.store.gradebook import Store

from ..conftest import needs_sandbox
from .exchange import RIGHT, WRONG, Course

pytestmark = needs_sandbox


@pytest.fixture
def course(tmp_path):
    return Course(tmp_path)


@contextmanager
def served(course: Course, **rules):
    """The service of ``course``, started (sandbox warm), with the rules given; closed after."""
    service = Service(course.course, Rules.parse(**rules), jobs=1, check_owner=False, log=lambda line: None)
    try:
        service.start()
        yield service
    finally:
        service.close()


def drain(service: Service, turns: int = 40) -> None:
    """Run the service's turns until nothing is queued and nothing waits to be graded again."""
    for _ in range(turns):
        if not service.step() and not service.queue.queued() and not service.restores:
            return
    raise AssertionError("the queue did not drain")


def gradebook(folder, student="ada"):
    """``(score, timestamp, status)`` of the student's ex01 in the gradebook of course ``folder``."""
    with Store("sqlite:///" + str(folder / "gradebook.db")) as store:
        submission = store.gb.find_submission("ex01", student)
        return float(submission.score), submission.timestamp, store.statuses()[submission.id]


def test_a_submission_is_graded_as_grade_course_grades_it(course, tmp_path):
    """Is ada's submission, graded by the service, recorded with the score, time, status and
    feedback page that ``grade --course DIR --student ada --assignment ex01`` gives the same
    submission, and is that page released where ``nbgrader fetch_feedback`` finds it?"""
    page = course.submit("ada", WRONG)
    with served(course) as service:
        drain(service)
        (attempt,) = service.queue.of("ada")
    assert (attempt.outcome, attempt.number, attempt.score, attempt.max_score) == ("graded", 1, 0, 2)
    assert attempt.questions[0]["cause"] and "f() is wrong" in attempt.questions[0]["message"]
    fetched = course.fetch_feedback("ada")
    assert [p.read_bytes() for p in fetched] == [course.released(page).read_bytes()]

    copy = tmp_path / "copy"  # the same submission, graded by the command in a copy of the course
    shutil.copytree(course.course, copy, ignore=shutil.ignore_patterns("gradebook.db*", "grading-service"))
    argv = ["grade", "--course", str(copy), "--student", "ada", "--assignment", "ex01"]
    assert main([*argv, "--out", str(tmp_path / "out"), "--jobs", "1", "--no-progress"]) == 0
    submitted = parse_utc((course.course / "submitted" / "ada" / "ex01" / "timestamp.txt").read_text())
    assert gradebook(course.course) == gradebook(copy) == (0.0, submitted, "graded")
    ours, theirs = (folder / "feedback" / "ada" / "ex01" / "ex01.html" for folder in (course.course, copy))
    assert ours.read_text() == theirs.read_text() == course.released(page).read_text()


def test_the_time_that_counts_is_the_kernels_not_the_learners_timestamp(course):
    """A learner who rewrites timestamp.txt (and its modification time) to a date before the
    deadline: is the submission dated when it really reached the exchange, with the claim kept?"""
    course.submit("ada", RIGHT)
    (folder,) = course.inbound.iterdir()
    stamp = folder / "timestamp.txt"
    stamp.write_text("2020-01-01 00:00:00.000000 UTC")
    os.utime(stamp, (1577836800, 1577836800))  # its modification time too: 2020-01-01
    changed = stamp.stat().st_ctime  # the kernel's: now
    with served(course) as service:
        drain(service)
        (attempt,) = service.queue.of("ada")
    assert attempt.claimed == "2020-01-01 00:00:00.000000 UTC"
    assert attempt.submitted_at == changed
    recorded = gradebook(course.course)[1]  # naive UTC, as nbgrader stores it
    assert abs(recorded.replace(tzinfo=UTC).timestamp() - changed) < 1e-3


def test_the_limit_holds_and_the_best_attempt_counts(course):
    """With two attempts that count the best: right, then wrong, then right again. Are the first
    two graded, the third kept but not graded with the reason on the page its learner fetches, and
    does the gradebook (and submitted/) hold the right one, not the later wrong one?"""
    course.submit("ada", RIGHT)
    with served(course, attempts=["2"], counts=["best"]) as service:
        drain(service)
        course.submit("ada", WRONG)
        drain(service)
        third = course.submit("ada", RIGHT)
        drain(service)
        rows = service.queue.of("ada")
    assert [(a.outcome, a.number, a.score) for a in rows] == [
        ("graded", 1, 2.0), ("graded", 2, 0.0), ("over limit", None, None),
    ]  # fmt: skip
    assert "all 2 attempts used" in rows[2].reason
    assert "all 2 attempts used" in course.released(third).read_text()
    assert len(course.fetch_feedback("ada")) == 3
    assert gradebook(course.course)[0] == 2.0
    assert "return 1" in (course.course / "submitted" / "ada" / "ex01" / "ex01.ipynb").read_text()


def test_extra_attempts_and_the_cooldown(course):
    """With one attempt and a cooldown of an hour: does a second attempt wait for the cooldown
    (not the limit) once the instructor grants one more with ``attempts --extra 1``, and is a
    later attempt after the grant graded when no cooldown applies to it?"""
    course.submit("ada", WRONG)
    with served(course, attempts=["1"], cooldown=["ex01=3600"]) as service:
        drain(service)
        course.submit("ada", RIGHT)
        drain(service)
        assert main(["attempts", "ex01", "ada", "--extra", "1", "--course", str(course.course)]) == 0
        course.submit("ada", RIGHT)
        drain(service)
        service.rules = Rules.parse(attempts=["1"])  # the instructor restarted it without the cooldown
        course.submit("ada", RIGHT)
        drain(service)
        rows = service.queue.of("ada")
    assert [a.outcome for a in rows] == ["graded", "over limit", "cooldown", "graded"]
    assert "the next one may come from" in rows[2].reason
    assert rows[3].number == 2 and gradebook(course.course)[0] == 2.0


def test_an_attempt_the_grader_could_not_grade_uses_none(course, monkeypatch):
    """When grading raises in the grader (its bug, not the learner's), is the attempt marked as not
    counted, with the learner told why, the earlier graded attempt put back in the gradebook, and
    the next attempt numbered as if the failed one had not been?"""
    course.submit("ada", RIGHT)
    judge = warm.judge_run
    with served(course, attempts=["2"]) as service:
        drain(service)

        def fails_on_wrong(prepared, *args):  # a grader bug that this one submission meets
            if any("return 2" in text for text in prepared.texts):
                raise ZeroDivisionError("the grader's own bug")
            return judge(prepared, *args)

        monkeypatch.setattr(warm, "judge_run", fails_on_wrong)
        course.submit("ada", WRONG)
        drain(service)
        assert gradebook(course.course)[0] == 2.0  # the graded attempt, back in the gradebook
        monkeypatch.setattr(warm, "judge_run", judge)
        course.submit("ada", WRONG)
        drain(service)
        rows = service.queue.of("ada")
    assert [(a.outcome, a.number, a.counted) for a in rows] == [("graded", 1, 1), ("not counted", None, 0),
                                                                ("graded", 2, 1)]  # fmt: skip
    assert rows[1].status == "crashed (grader error: ZeroDivisionError)" and "does not use an attempt" in rows[1].reason
    assert gradebook(course.course)[0] == 0.0  # the latest counts


def test_hidden_results_are_held_until_the_due_date(course):
    """With --hold-hidden and a due date an hour ahead: does the learner's released page and their
    view of the attempt say nothing of the question decided by hidden tests (no score, no verdict)
    until the due date, and is the full page released once it passed?"""
    due = time.time() + 3600
    with Store("sqlite:///" + str(course.course / "gradebook.db")) as store:
        store.prepare("ex01", "ex01.ipynb", course.source)
        store.set_duedate("ex01", datetime.fromtimestamp(due, UTC).replace(tzinfo=None))
    page = course.submit("ada", RIGHT)
    with served(course, hold_hidden=True) as service:
        drain(service)
        (attempt,) = service.queue.of("ada")
        released = course.released(page).read_text()
        shown = view.page("ada", [attempt], [], service.rules, {}, "c101", "/", hidden=service.hidden)
        assert attempt.score == 2 and attempt.held_until == pytest.approx(due, abs=1)  # the gradebook's, in full
        assert "held until the due date" in released and "2 / 2" not in released and "passed" not in released
        assert "held until the due date (hidden tests)" in shown and "0 / 2 so far" in shown
        # the hour passes: the row is held until a moment ago
        service.queue.db.execute("UPDATE attempts SET held_until = ?", (time.time() - 1,))
        service.step()
        full = (course.course / "feedback" / "ada" / "ex01" / "ex01.html").read_text()
        assert course.released(page).read_text() == full
        assert service.queue.of("ada")[0].held_until is None


def test_one_learners_flood_waits_in_the_exchange_not_in_the_service(course, monkeypatch):
    """With at most 2 queued per learner: eve hands in 5 at once, ada 1. Does the service take 2 of
    eve's and ada's, leave eve's other 3 in the exchange until hers are graded, then grade all 6?"""
    monkeypatch.setattr(loop, "WAITING", 2)
    for _ in range(5):
        course.submit("eve", WRONG)
    course.submit("ada", RIGHT)
    with served(course) as service:
        service.receive()
        assert sorted(a.student for a in service.queue.queued()) == ["ada", "eve", "eve"]
        drain(service)
        rows = service.queue.of()
    assert len(rows) == 6 and {a.outcome for a in rows} == {"graded"}
    assert [a.number for a in rows if a.student == "eve"] == [1, 2, 3, 4, 5]


def test_saved_references_are_used_and_a_restart_loads_its_own(course, monkeypatch):
    """With ``--references`` (saved by the references command) the service runs no solution; without
    them, a restarted service loads the references it saved itself instead of running the solution
    again: is the solution run only once across both lives, and is grading the same?"""
    runs = []
    original = warm.solution_records
    monkeypatch.setattr(warm, "solution_records", lambda *a: runs.append(1) or original(*a))
    course.submit("ada", RIGHT)
    with served(course) as service:
        drain(service)
    course.submit("ada", WRONG)
    with served(course) as service:  # a second life: its own saved references
        drain(service)
        rows = service.queue.of("ada")
    assert len(runs) == 1 and [a.score for a in rows] == [2.0, 0.0]
    saved = course.root / "refs.json"
    saving.write(saving.build(course.course / "source"), saved)
    course.submit("bob", RIGHT)
    service = Service(course.course, Rules(), jobs=1, check_owner=False, log=lambda line: None)
    service.grader.saved = SavedReferences.load(saved, course.course / "source")
    (course.course / "grading-service" / "references.json").unlink()
    try:
        service.start()
        drain(service)
        assert [a.score for a in service.queue.of("bob")] == [2.0] and len(runs) == 1
    finally:
        service.close()


def test_a_flood_of_junk_folders_costs_its_owners_share_not_a_classmates_turn(course, monkeypatch):
    """eve made 60 folders that are no submission in the inbound (writable by all) before ada
    handed in: is ada graded in the service's first turn, and are only REFUSED of eve's names
    recorded (the rest skipped, the queue no longer for one learner's junk)?"""
    monkeypatch.setattr(loop, "REFUSED", 3)
    for i in range(60):
        (course.inbound / f"junk{i}").mkdir()
    course.submit("ada", RIGHT)
    with served(course) as service:
        service.step()
        first, *refused = service.queue.of()
        service.step()
        assert len(service.queue.of()) == 4
    assert (first.student, first.outcome, first.score) == ("ada", "graded", 2.0)
    assert [(a.outcome, a.owner) for a in refused] == [("refused", os.getuid())] * 3


def test_attempts_that_cannot_count_keep_no_notebooks(course):
    """With two attempts that count the latest: right, wrong, then one over the limit. Is the
    over-limit one received without copying its notebook, and the first one's deleted once the
    second counts, so the service's disk holds one notebook for ada, not three?"""
    course.submit("ada", RIGHT)
    with served(course, attempts=["2"]) as service:
        drain(service)
        course.submit("ada", WRONG)
        drain(service)
        course.submit("ada", WRONG)
        drain(service)
        rows = service.queue.of("ada")
    assert [a.outcome for a in rows] == ["graded", "graded", "over limit"]
    kept = list((course.course / "grading-service" / "attempts").rglob("*.ipynb"))
    assert [p.relative_to(course.course / "grading-service" / "attempts").parts[0] for p in kept] == [rows[1].id]


def test_a_student_id_the_service_writes_and_an_attempt_that_keeps_failing_are_refused_once(course, monkeypatch):
    """A learner whose id is ``feedback.html`` (the service's kept page beside their copy): refused
    at once, with the reason? And an attempt on which the service's own step keeps failing: refused
    after TRIES failed turns, not retried forever?"""
    course.submit("feedback.html", RIGHT)
    course.submit("ada", RIGHT)
    with served(course) as service:
        monkeypatch.setattr(service, "_hand_out", lambda *a: (_ for _ in ()).throw(IsADirectoryError(21, "a folder")))
        for _ in range(loop.TRIES):
            with pytest.raises(IsADirectoryError):
                service.step()
        assert service.step() is False
        rows = {a.student: a for a in service.queue.of()}
    assert rows[""].reason == "refused: a student id the service's folder uses for its own files"
    assert rows["ada"].outcome == "refused" and f"failed on it {loop.TRIES} times" in rows["ada"].reason
