"""A course with nbgrader's filesystem exchange in a temporary folder, and learners who submit and
fetch feedback through nbgrader's own exchange classes (``ExchangeSubmit``,
``ExchangeFetchFeedback``: what ``nbgrader submit`` and ``fetch_feedback`` run), in this process.

The course holds the tiny source of ``tests/grading/conftest.py`` as assignment ``ex01``; the
exchange's folders have the modes ``nbgrader release_assignment`` gives them (the inbound
writable by all, listable by its owner only). The benchmark (``tests/scripts/benchmark_submit.py``)
and the service's tests use it; the hub tests use real accounts and nbgrader's commands instead.
"""

from __future__ import annotations

import os
from pathlib import Path

import nbformat
from nbgrader.auth import Authenticator
from nbgrader.coursedir import CourseDirectory
from nbgrader.exchange.default.fetch_feedback import ExchangeFetchFeedback
from nbgrader.exchange.default.submit import ExchangeSubmit
from nbgrader.utils import notebook_hash
from traitlets.config import Config

from ..conftest import submission_of, tiny_source

COURSE_ID = "c101"
RIGHT, WRONG = "def f():\n    return 1", "def f():\n    return 2"


class Course:
    """``root/course`` (source ``ex01``, ``nbgrader_config.py`` naming the exchange) and
    ``root/exchange``; learners' folders under ``root/homes``."""

    def __init__(self, root: Path, source=None, assignment: str = "ex01", release=None):
        """``source``, ``release``: the assignment's nbgrader source notebook and its release
        (default: the tiny source and its release)."""
        self.root, self.assignment = root, assignment
        self.course, self.exchange = root / "course", root / "exchange"
        self.source = source or tiny_source()
        (self.course / "source" / assignment).mkdir(parents=True)
        nbformat.write(self.source, self.course / "source" / assignment / f"{assignment}.ipynb")
        config = f"c.CourseDirectory.course_id = {COURSE_ID!r}\nc.Exchange.root = {str(self.exchange)!r}\n"
        (self.course / "nbgrader_config.py").write_text("c = get_config()\n" + config, encoding="utf-8")
        course = self.exchange / COURSE_ID
        for folder, mode in [(self.exchange, 0o777), (course, 0o755), (course / "outbound", 0o755),
                             (course / "inbound", 0o733)]:  # fmt: skip
            folder.mkdir(exist_ok=True)
            os.chmod(folder, mode)
        (course / "outbound" / assignment).mkdir()
        release = release if release is not None else self.answer(WRONG)
        nbformat.write(release, course / "outbound" / assignment / f"{assignment}.ipynb")

    @property
    def inbound(self) -> Path:
        return self.exchange / COURSE_ID / "inbound"

    def answer(self, text: str):
        return submission_of(self.source, text)

    def _learner(self, student: str) -> tuple[Path, Config, CourseDirectory]:
        home = self.root / "homes" / student
        (home / self.assignment).mkdir(parents=True, exist_ok=True)
        config = Config()
        config.Exchange.root, config.CourseDirectory.course_id = str(self.exchange), COURSE_ID
        config.Exchange.cache, config.Exchange.assignment_dir = str(home / ".cache"), str(home)
        coursedir = CourseDirectory(config=config)
        coursedir.assignment_id, coursedir.student_id = self.assignment, student
        return home, config, coursedir

    def submit(self, student: str, answer: str | None = None, notebook=None) -> str:
        """Hand in ``answer`` (the answer cell's text) or ``notebook`` as ``student``; returns the
        path, relative to the exchange's feedback folder, where its page will be released."""
        home, config, coursedir = self._learner(student)
        nbformat.write(notebook or self.answer(answer), home / self.assignment / f"{self.assignment}.ipynb")
        submit = ExchangeSubmit(coursedir=coursedir, authenticator=Authenticator(config=config), config=config)
        submit.start()
        secret = (self.inbound / submit.assignment_filename / "submission_secret.txt").read_text()
        return f"{notebook_hash(secret=secret, notebook_id=self.assignment)}.html"

    def fetch_feedback(self, student: str) -> list[Path]:
        """``nbgrader fetch_feedback`` as ``student``: the pages now in their folder."""
        home, config, coursedir = self._learner(student)
        ExchangeFetchFeedback(coursedir=coursedir, authenticator=Authenticator(config=config), config=config).start()
        return sorted((home / self.assignment / "feedback").glob("*/*.html"))

    def released(self, page: str) -> Path:
        return self.exchange / COURSE_ID / "feedback" / page
