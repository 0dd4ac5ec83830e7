"""Benchmark: the class report of a synthetic class, read from nbgrader's gradebook. Not a test; run
it by hand from the repository root:

    PYTHONPATH=$PWD .venv/bin/python tests/scripts/benchmark_report.py [--students 40] [--out DIR]

The class: every student submits every assignment of ``solutions/`` (40 x 14 by default); each
question passes with probability 0.6, else fails with one of 40 causes (keys as the grader makes
them, messages with per-student numbers; a few without a key, grouped by their wording). The rows
are written into a fresh gradebook with nbgrader's API (not timed); then ``python -m autograder
report --db URL --out DIR`` runs as an instructor would run it, and its wall time is printed, with
the time of the report alone (read, count, write) in this process, wall and CPU (on a shared machine
the CPU time is the steadier figure).
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from nbgrader.api import Comment, Gradebook

from autograder.compare.causes import with_cause_line
from autograder.grading.judge.assemble import questions
from autograder.grading.out.report import report_from_gradebook
from autograder.grading.runs.batch import load_sources
from autograder.lessons import COURSE_ROOT

CAUSES = [f"tensor.multiple.cause_{i}" for i in range(20)] + [f"bytes.double.part_{i}" for i in range(15)]
CAUSES += ["not_answered", "error.consumed", "error.not_built", "error.modified_inplace", ""]


def synthesize(db_url: str, students: int, seed: int = 0) -> int:
    """Write the synthetic class into the gradebook at ``db_url``; returns the number of grades."""
    rng = random.Random(seed)
    sources = load_sources(COURSE_ROOT / "solutions")
    count = 0
    with Gradebook(db_url) as gb:
        for assignment, (name, source) in sources.items():
            gb.add_assignment(assignment)
            gb.add_notebook(name.removesuffix(".ipynb"), assignment)
            for q in questions(source):
                gb.add_grade_cell(
                    q.grade_id, name.removesuffix(".ipynb"), assignment, max_score=q.points, cell_type="code"
                )
        for s in range(students):
            student = f"student-{s:03d}"
            gb.add_student(student)
            for assignment, (name, source) in sources.items():
                notebook = name.removesuffix(".ipynb")
                gb.add_submission(assignment, student)
                submitted = gb.find_submission_notebook(notebook, assignment, student)
                for q in questions(source):
                    grade = gb.find_grade(q.grade_id, notebook, assignment, student)
                    passed = rng.random() < 0.6
                    grade.auto_score = q.points if passed else 0.0
                    if not passed:
                        cause = rng.choice(CAUSES)
                        message = f"w.grad is exactly {rng.randint(2, 9)}x the expected value: {cause or 'no key'}"
                        gb.db.add(
                            Comment(
                                cell_id=grade.cell_id, notebook=submitted, auto_comment=with_cause_line(message, cause)
                            )
                        )
                    count += 1
                gb.db.commit()
    return count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--students", type=int, default=40)
    parser.add_argument("--out", default=None, help="where the report goes (default: a temporary folder)")
    args = parser.parse_args()
    os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"  # alembic
    with tempfile.TemporaryDirectory(prefix="report-benchmark-") as tmp:
        db_url = f"sqlite:///{Path(tmp) / 'gradebook.db'}"
        out = Path(args.out or Path(tmp) / "out")
        start = time.perf_counter()
        grades = synthesize(db_url, args.students)
        print(f"synthesized {grades} graded questions in {time.perf_counter() - start:.1f} s (not timed below)")
        start, cpu = time.perf_counter(), time.process_time()
        report_from_gradebook(db_url, out, COURSE_ROOT / "solutions")
        print(
            f"report in this process (read the gradebook, count, write both files): "
            f"{time.perf_counter() - start:.2f} s wall, {time.process_time() - cpu:.2f} s CPU"
        )
        start, before = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run([sys.executable, "-m", "autograder", "report", "--db", db_url, "--out", str(out)], check=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
        print(
            f"python -m autograder report: {time.perf_counter() - start:.2f} s wall, {cpu:.2f} s CPU (imports included)"
        )
        print(f"load average while it ran: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
        print(f"report.html: {(out / 'report.html').stat().st_size / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
