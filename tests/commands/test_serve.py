"""Does ``python -m autograder serve --course DIR``, killed with ``kill -9`` in the middle of a burst
of submissions and started again, grade every submission, record each once, and stop cleanly on
SIGTERM?"""

import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

from ..grading.conftest import require_sandbox
from ..grading.service.exchange import RIGHT, WRONG, Course

REPO = Path(__file__).resolve().parents[2]


class Served:
    """The command as a process of its own, its output collected line by line."""

    def __init__(self, course: Course, *options: str):
        env = dict(os.environ, JUPYTER_CONFIG_DIR=str(course.root / "jupyter"), PYTHONUNBUFFERED="1")
        command = [sys.executable, "-m", "autograder", "serve", "--course", str(course.course), "--jobs", "1"]
        self.process = subprocess.Popen(
            [*command, "--no-check-owner", *options], cwd=REPO, env=env, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True,
        )  # fmt: skip
        self.lines: list[str] = []
        threading.Thread(target=lambda: self.lines.extend(self.process.stdout), daemon=True).start()

    def wait_for(self, predicate, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while not predicate():
            assert self.process.poll() is None, "".join(self.lines)
            assert time.monotonic() < deadline, "".join(self.lines)
            time.sleep(0.1)


def rows(course: Course) -> list[tuple]:
    with sqlite3.connect(course.course / "grading-service" / "queue.db") as db:
        return db.execute("SELECT inbound, student, state, number, score FROM attempts ORDER BY seq").fetchall()


def test_a_service_killed_mid_burst_grades_everything_once_when_started_again(tmp_path):
    """Twelve submissions from three learners at once; the service is killed with SIGKILL after a
    few are graded and started again. Is every submission graded, each recorded once (attempts
    1-4 of each learner, one row per folder), its page released, and does SIGTERM stop it?"""
    require_sandbox()
    course = Course(tmp_path)
    first = Served(course)
    first.wait_for(lambda: any(line.startswith("serving") for line in first.lines))
    pages = [course.submit(student, (RIGHT, WRONG)[i % 2]) for i in range(4) for student in ("ada", "bob", "eve")]
    first.wait_for(lambda: sum(r[2] == "done" for r in rows(course)) >= 3)
    first.process.send_signal(signal.SIGKILL)
    first.process.wait(timeout=30)
    assert sum(r[2] == "done" for r in rows(course)) < 12, "the burst was over before the kill: nothing was tested"

    second = Served(course)
    second.wait_for(lambda: all(course.released(p).is_file() for p in pages) and len(rows(course)) == 12)
    second.wait_for(lambda: all(r[2] == "done" for r in rows(course)))
    second.process.send_signal(signal.SIGTERM)
    assert second.process.wait(timeout=60) == 0, "".join(second.lines)
    recorded = rows(course)
    assert len({r[0] for r in recorded}) == 12
    for student in ("ada", "bob", "eve"):
        mine = [r for r in recorded if r[1] == student]
        assert [r[3] for r in mine] == [1, 2, 3, 4] and [r[4] for r in mine] == [2.0, 0.0, 2.0, 0.0]
    assert len(course.fetch_feedback("ada")) == 4
