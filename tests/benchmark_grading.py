"""Benchmark: grade the demo class with our command (--jobs 1 and 2) and with plain sequential
`nbgrader autograde`, on the same submissions, in one run. Not a test; run it by hand:

    .venv/bin/python tests/benchmark_grading.py [--copies N]

--copies N grades N copies of each demo student (default 1). Prints seconds per notebook.
"""
from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

from autograder.grading.batch import grade_class
from autograder.grading.demo import build_demo_class
from autograder.grading.nbgrader_cli import course_copy, nbgrader


def timed(label: str, fn, notebooks: int) -> float:
    start = time.perf_counter()
    fn()
    seconds = time.perf_counter() - start
    print(f"{label:<40} {seconds:7.1f} s  {seconds / notebooks:6.2f} s/notebook", flush=True)
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        build_demo_class(tmp / "demo")
        submitted = tmp / "submitted"
        for copy in range(args.copies):
            for student in (tmp / "demo").iterdir():
                shutil.copytree(student, submitted / f"{student.name}-{copy}")
        notebooks = len(list(submitted.rglob("*.ipynb")))
        assignments = sorted({p.parent.name for p in submitted.rglob("*.ipynb")})
        print(f"{notebooks} notebooks, {len(assignments)} assignments")
        ours = {jobs: timed(f"python -m autograder grade --jobs {jobs}",
                            lambda: grade_class(submitted, tmp / f"out{jobs}", jobs=jobs, progress=False),
                            notebooks) for jobs in (1, 2)}
        root = course_copy(tmp / "course")
        for assignment in assignments:
            nbgrader(root, "generate_assignment", assignment)
        shutil.copytree(submitted, root / "submitted")

        def plain():
            for assignment in assignments:
                nbgrader(root, "autograde", assignment)
        base = timed("nbgrader autograde (sequential)", plain, notebooks)
        for jobs, seconds in ours.items():
            print(f"speed-up over plain nbgrader at --jobs {jobs}: {base / seconds:.2f}x")


if __name__ == "__main__":
    main()
