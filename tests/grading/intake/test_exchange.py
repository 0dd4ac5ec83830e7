"""Does a submission go the whole way through nbgrader's exchange with the course's grader in
the middle: release -> fetch -> submit -> collect -> grade -> release_feedback -> fetch_feedback,
with formgrader's API seeing it autograded with the grader's score?"""

import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
from nbgrader.api import Gradebook

from ..conftest import needs_sandbox, submission_of


def run(cwd, *args):
    """``python ARGS`` in ``cwd``, with the environment's bin/ on PATH (nbgrader runs alembic)."""
    env = dict(os.environ, PATH=str(Path(sys.executable).parent) + os.pathsep + os.environ["PATH"])
    done = subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True, env=env)
    assert done.returncode == 0, (args, done.stdout[-2000:], done.stderr[-3000:])
    return done


@needs_sandbox
def test_a_submission_goes_through_the_exchange_and_gets_its_feedback(source, tmp_path):
    course, student, exchange = tmp_path / "course", tmp_path / "learner", tmp_path / "exchange"
    (course / "source" / "ex01").mkdir(parents=True)
    student.mkdir()
    exchange.mkdir()
    nbformat.write(source, course / "source" / "ex01" / "ex01.ipynb")
    (course / "nbgrader_config.py").write_text(
        f"c = get_config()\nc.CourseDirectory.root = {str(course)!r}\nc.CourseDirectory.course_id = 'torch101'\n"
        f"c.Exchange.root = {str(exchange)!r}\n",
        encoding="utf-8",
    )
    exchange_flags = [f"--Exchange.root={exchange}", "--course=torch101"]
    nb = [*"-m nbgrader".split()]
    run(course, *nb, "generate_assignment", "ex01")
    run(course, *nb, "release_assignment", "ex01")
    run(student, *nb, "fetch_assignment", "ex01", *exchange_flags)
    fetched = nbformat.read(student / "ex01" / "ex01.ipynb", as_version=4)
    answered = submission_of(source, "def f():\n    return 1")
    fetched.cells[2].source = answered.cells[2].source  # the learner writes the answer
    nbformat.write(fetched, student / "ex01" / "ex01.ipynb")
    run(student, *nb, "submit", "ex01", *exchange_flags)
    run(course, *nb, "collect", "ex01")
    (learner,) = [p.name for p in (course / "submitted").iterdir()]

    graded = run(course, "-m", "autograder", "grade", "--course", str(course), "--out", str(tmp_path / "out"))
    assert re.search(rf"^{learner}\s+ex01\s+2\s+2\s+graded$", graded.stdout, re.MULTILINE), graded.stdout
    assert (course / "feedback" / learner / "ex01" / "ex01.html").is_file()
    assert (course / "autograded" / learner / "ex01" / "ex01.ipynb").is_file()
    with Gradebook(f"sqlite:///{course}/gradebook.db") as gb:
        assert gb.find_submission("ex01", learner).score == 2

    # what formgrader shows: nbgrader's own API over the course folder
    api = run(
        course,
        "-c",
        "from nbgrader.apps import NbGraderAPI; from nbgrader.coursedir import CourseDirectory; "
        "from traitlets.config.loader import PyFileConfigLoader as L; "
        "cfg = L('nbgrader_config.py', path='.').load_config(); "
        f"s = NbGraderAPI(CourseDirectory(config=cfg), config=cfg).get_submission('ex01', '{learner}'); "
        "print(s['autograded'], s['score'], s['max_score'])",
    )
    assert api.stdout.split() == ["True", "2.0", "2.0"]

    run(course, *nb, "release_feedback", "ex01")
    run(student, *nb, "fetch_feedback", "ex01", *exchange_flags)
    (page,) = (student / "ex01" / "feedback").glob("*/ex01.html")
    text = page.read_text(encoding="utf-8")
    assert "Feedback: ex01" in text and "2 / 2" in text
    assert "show_values" not in text and "HIDDEN TESTS" not in text  # the hidden test's line is not on the page


def test_a_timestamp_that_cannot_be_read_is_the_latest_it_can_be(tmp_path):
    """Finding 5's class: is a timestamp.txt in nbgrader's form read as nbgrader reads it, and one
    that is no time (another form, a zone naming a file, a year past any term) taken as now, said?"""
    from datetime import UTC, datetime

    from autograder.grading.intake.exchange import submission_timestamp

    def read(text):
        (tmp_path / "timestamp.txt").write_text(text, encoding="utf-8")
        return submission_timestamp(tmp_path)

    assert read("2026-01-20 10:00:00.000000 UTC") == (datetime(2026, 1, 20, 10), "")
    assert read("2026-01-20 10:00:00 America/New_York")[0] == datetime(2026, 1, 20, 15)
    for text in ("soon", "2026-01-20 10:00:00 /etc/passwd", "9999-12-31 23:59:59", "10:00", "2026-01-20 10:00 +99999"):
        when, problem = read(text)
        assert abs((when - datetime.now(UTC).replace(tzinfo=None)).total_seconds()) < 60, text
        assert problem.startswith("unreadable timestamp.txt") and "latest it can be" in problem, text


def test_a_timestamp_that_is_a_folder_or_a_link_is_never_on_time(tmp_path):
    """A learner who replaced their inbound timestamp.txt with a folder or a link: is the time
    unreadable (taken as now), not absent (never late)?"""
    from autograder.grading.intake.exchange import submission_timestamp

    (tmp_path / "a" / "timestamp.txt").mkdir(parents=True)
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "timestamp.txt").symlink_to(tmp_path / "elsewhere.txt")
    for folder in ("a", "b"):
        when, problem = submission_timestamp(tmp_path / folder)
        assert when is not None and problem.startswith("unreadable timestamp.txt"), folder
    assert submission_timestamp(tmp_path) == (None, "")  # none there: never late, as nbgrader reads it
