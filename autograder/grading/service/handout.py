"""Feedback handed back through the exchange by nbgrader's own ``release_feedback`` code, so that the
learner's ``nbgrader fetch_feedback`` and Assignments tab find it unchanged.

``release_feedback`` copies ``<course>/feedback/<student>/<assignment>/<notebook>.html`` to
``<exchange>/<course_id>/feedback/<hash>.html``, where the hash is of the submission's secret and
the notebook's name: each submission's page has a name only its learner can compute, in a folder
nobody can list. A graded submission's page is where ``grade --course`` put it; a submission that
was not graded (over the limit, too soon) gets a short page saying why (and one whose hidden
tests' results are held, a page without them), released the same way from a folder of its own
(:func:`publish`), under its own secret.
"""

from __future__ import annotations

import html
import os
from pathlib import Path

from nbgrader.auth import Authenticator
from nbgrader.coursedir import CourseDirectory
from nbgrader.exchange.default.release_feedback import ExchangeReleaseFeedback
from traitlets.config import Config

from ..intake.exchange import SECRET, TIMESTAMP, read_small

__all__ = ["release", "publish", "notice_html"]


def release(exchange, root: Path, student: str, assignment: str) -> None:
    """``nbgrader release_feedback ASSIGNMENT --student STUDENT`` for the course folder ``root``
    (nbgrader's ``ExchangeReleaseFeedback``, configured as the course is). Every page released is
    made readable by all first (nbgrader copies a file's mode; the learner reads it as themselves).

    Raises:
        nbgrader.exchange.ExchangeError: nbgrader refused (the exchange folder is missing, say).
    """
    folder = root / "feedback" / student / assignment
    for page in folder.glob("*.html"):
        os.chmod(page, 0o644)
    config = Config(exchange.config)
    config.CourseDirectory.root = str(root)
    coursedir = CourseDirectory(config=config)
    coursedir.assignment_id, coursedir.student_id = assignment, student
    ExchangeReleaseFeedback(coursedir=coursedir, authenticator=Authenticator(config=config), config=config).start()


def notice_html(assignment: str, title: str, text: str, items=()) -> str:
    """A short feedback page that says ``text`` (why a submission was not graded, what is held) and
    lists ``items``, all escaped (the same offline rules as the graded pages: no script, nothing
    loaded)."""
    listed = "".join(f"<li>{html.escape(item)}</li>" for item in items)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">"
        f"<title>{html.escape(assignment)}: {html.escape(title)}</title>"
        "<style>body{font-family:sans-serif;max-width:40em;margin:2em auto;line-height:1.5}</style></head>"
        f"<body><h1>{html.escape(assignment)}: {html.escape(title)}</h1><p>{html.escape(text)}</p>"
        f"{f'<ul>{listed}</ul>' if listed else ''}</body></html>\n"
    )


def publish(exchange, folder: Path, taken: Path, student: str, assignment: str, notebook: str, page: str) -> None:
    """Release the HTML ``page`` for the submission copied in ``taken`` (its secret), from a
    course-like folder of its own, ``folder``. Nothing is released when the submission has no
    secret (nbgrader's exchange gives one to every submission since 0.8) or no notebook."""
    secret = read_small(taken, SECRET)
    if secret is None or not notebook:
        return
    pages = folder / "feedback" / student / assignment
    pages.mkdir(parents=True, exist_ok=True)
    (pages / f"{Path(notebook).stem}.html").write_text(page, encoding="utf-8", errors="replace")
    (pages / SECRET).write_text(secret, encoding="utf-8")
    (pages / TIMESTAMP).write_text(read_small(taken, TIMESTAMP) or "", encoding="utf-8")
    release(exchange, folder, student, assignment)
