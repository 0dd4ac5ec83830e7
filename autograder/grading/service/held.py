"""Hidden tests' results held back until the due date (``serve --hold-hidden``).

A question whose test cell holds hidden tests (``### BEGIN HIDDEN TESTS``) is decided by checks
the learner cannot run; while its assignment's due date is ahead, telling whether it passed would
tell classmates still working what the hidden tests accept. So, until then, such a question is
shown as held (no score, no message), the score shown is that of the other questions, and the
page released through the exchange is a short one that says so (the full page waits in the
service's folder). The learner's own notebook already shows what the visible checks say. When the
due date passes, the service releases the full pages (``loop.Service``); the gradebook holds the
full scores all along (only instructors read it).
"""

from __future__ import annotations

import time

from ..judge.assemble import grade_id, is_test, visible_source
from .handout import notice_html
from .queue import Attempt

__all__ = ["hidden_questions", "is_held", "shown", "held_html"]


def hidden_questions(source) -> set[str]:
    """The grade ids of ``source``'s test cells that hold hidden tests."""
    return {grade_id(c) for c in source.cells if is_test(c) and visible_source(c.source) != c.source}


def is_held(attempt: Attempt, now: float | None = None) -> bool:
    return attempt.held_until is not None and (time.time() if now is None else now) < attempt.held_until


def shown(attempt: Attempt, hidden: set[str], now: float | None = None) -> Attempt:
    """``attempt`` as its learner may see it now: while held, its questions with hidden tests
    replaced by ``{"grade_id", "points", "held": True}`` and its score that of the others."""
    if not is_held(attempt, now):
        return attempt
    questions = [
        {"grade_id": q["grade_id"], "points": q["points"], "held": True} if q["grade_id"] in hidden else q
        for q in attempt.questions
    ]
    score = sum(q.get("score", 0) for q in questions if not q.get("held"))
    return Attempt(**{**attempt.__dict__, "questions": questions, "score": score, "late_penalty": None})


def held_html(attempt: Attempt, hidden: set[str]) -> str:
    """The page released for a held attempt: each question's outcome, or that it is held."""
    view = shown(attempt, hidden, now=0.0 if attempt.held_until is None else attempt.held_until - 1)
    lines = []
    for q in view.questions:
        if q.get("held"):
            lines.append(f"{q['grade_id']}: held until the due date (hidden tests), {q['points']:g} points")
        else:
            verdict = "passed" if q["score"] >= q["points"] else f"failed: {q.get('message', '')}"
            lines.append(f"{q['grade_id']}: {q['score']:g} / {q['points']:g}, {verdict}")
    due = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(attempt.held_until or 0))
    text = f"Results of the questions with hidden tests are shown after the due date ({due})."
    return notice_html(attempt.assignment, f"attempt {attempt.number}", text, lines)
