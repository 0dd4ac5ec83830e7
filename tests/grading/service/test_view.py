"""Does the service's page show a learner their attempts as the queue holds them (place in the queue
while waiting, score, causes, attempts left, why one was not graded), with everything a submission
named escaped, no script, and a reload only while something shown is waiting?"""

from autograder.grading.service import view
from autograder.grading.service.queue import Attempt
from autograder.grading.service.settings import Rules


def attempt(key, student="ada", state="done", outcome="graded", **fields):
    return Attempt(key, f"{student}+ex01+t+{key}", student, "ex01", 1, 0, 0, "", "ex01.ipynb", state, outcome, **fields)


def test_a_waiting_attempt_shows_its_place_and_the_page_reloads():
    """Ada's second attempt waits behind bob's: does her page say place 2 of 2, and reload itself?"""
    rows = [attempt("a1", counted=1, number=1, score=2, max_score=8), attempt("a2", state="queued", outcome="")]
    queued = [attempt("b1", "bob", state="queued", outcome=""), rows[1]]
    html = view.page("ada", rows, queued, Rules.parse(attempts=["3"]), {}, "c101", "/services/grader/")
    assert "waiting: place 2 of 2 in the queue" in html and 'http-equiv="refresh"' in html
    assert "1 of 3 attempts used, 2 left" in html and "2 / 8" in html
    assert 'href="/services/grader/feedback/a1"' in html and "feedback/a2" not in html
    done = view.page("ada", rows[:1], [], Rules(), {}, "c101", "/")
    assert 'http-equiv="refresh"' not in done and "unlimited attempts" in done


def test_causes_reasons_and_names_are_escaped_text():
    """A failed question's message and cause, an over-limit reason and (for the instructor) a
    refused folder whose name holds HTML and terminal escapes: shown as text, never as markup?"""
    failed = {"grade_id": "q1", "score": 0, "points": 2, "cause": "value.f", "message": "<img src=x onerror=alert(1)>"}
    rows = [
        attempt("a1", counted=1, number=1, score=0, max_score=2, questions=[failed]),
        attempt("a2", outcome="over limit", reason="not graded: all 1 attempts used"),
        Attempt("r", "<script>\x1b]0;x\x07+ex01+t+r", "", "", 3, 0, 0, "", "", "done", "refused", reason="refused"),
    ]
    html = view.page("teacher", rows, [], Rules.parse(attempts=["1"]), {("ada", "ex01"): 1}, "c101", "/", True)
    assert "&lt;img src=x onerror=alert(1)&gt;" in html and "<img" not in html
    assert "<code>[value.f]</code>" in html and "not graded: all 1 attempts used" in html
    assert "&lt;script&gt;]0;x+ex01+t+r" in html and "<script" not in html and "\x1b" not in html
    assert "1 of 2 attempts used, 1 left" in html  # the grant counts
    assert "content=\"default-src 'none'; style-src 'unsafe-inline';" in html
