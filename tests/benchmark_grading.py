"""Benchmark: grade a synthetic class with our command (--jobs 1 and 2) and with plain sequential
`nbgrader autograde`, on the same submissions, in one run. Not a test; run it by hand:

    .venv/bin/python tests/benchmark_grading.py [--students 40] [--assignments ex01_graph ...] [--demo]

The class: every student submits every assignment, a realistic mix built from the demo class:
mostly correct answers and typical mistakes, some untouched releases, some truncated files and
some answers that kill their process. Prints seconds per notebook, the speed-up, and what a
fresh Jupyter kernel plus `import torch` costs against one fork of a warm grading worker.
"""
from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat

from autograder.grading.batch import COURSE_ROOT, grade_class, load_sources
from autograder.grading.demo import build_demo_class
from autograder.grading.nbgrader_cli import course_copy, nbgrader
from autograder.grading.runner import run_cells, warm_up

CRASH = "import os\nos._exit(1)\n"


def build_class(folder: Path, students: int, assignments: list[str]) -> int:
    """Write ``students`` x ``assignments`` submissions under ``folder``; returns their number."""
    demo = folder.parent / "demo"
    build_demo_class(demo)
    sources = load_sources(COURSE_ROOT / "solutions")
    for a in assignments:
        name = sources[a][0]
        pool = sorted(p.parents[1].name for p in demo.glob(f"*/{a}/{name}"))
        pool = ["correct"] * 4 + [s for s in pool if s not in ("correct", "blank")]
        for s in range(students):
            target = folder / f"student-{s:02d}" / a / name
            target.parent.mkdir(parents=True)
            if s % 10 == 9:  # broken: a truncated file
                target.write_bytes((demo / "correct" / a / name).read_bytes()[:500])
            elif s % 10 == 8:  # an untouched release
                shutil.copy(demo / "blank" / a / name, target)
            elif s % 10 == 7:  # an answer that kills its process
                nb = nbformat.read(demo / "correct" / a / name, as_version=4)
                first = next(c for c in nb.cells if c.get("metadata", {}).get("nbgrader", {}).get("solution"))
                first.source = CRASH + first.source
                nbformat.write(nb, target)
            else:
                shutil.copy(demo / pool[s % len(pool)] / a / name, target)
    return students * len(assignments)


def timed(label: str, fn, notebooks: int) -> float:
    start = time.perf_counter()
    fn()
    seconds = time.perf_counter() - start
    print(f"{label:<44} {seconds:7.1f} s  {seconds / notebooks:6.2f} s/notebook", flush=True)
    return seconds


def start_up_costs() -> None:
    """What a fresh Jupyter kernel with torch costs, against a fork of a warm worker."""
    from jupyter_client.manager import start_new_kernel

    start = time.perf_counter()
    km, kc = start_new_kernel(kernel_name="python3", stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    started = time.perf_counter()
    kc.execute_interactive("import torch", timeout=120)
    imported = time.perf_counter()
    kc.stop_channels()
    km.shutdown_kernel(now=True)
    warm_up()
    with tempfile.TemporaryDirectory() as tmp:
        fork_start = time.perf_counter()
        run_cells(["import torch"], tmp)
        fork = time.perf_counter() - fork_start
    print(f"Jupyter kernel start {started - start:.2f} s + import torch in it {imported - started:.2f} s; "
          f"one fork of a warm worker running `import torch`: {fork:.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=40)
    parser.add_argument("--assignments", nargs="*", default=sorted(load_sources(COURSE_ROOT / "solutions")))
    parser.add_argument("--demo", action="store_true", help="grade exactly the demo class instead")
    args = parser.parse_args()
    start_up_costs()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        submitted = tmp / "submitted"
        if args.demo:
            build_demo_class(submitted)
            notebooks = len(list(submitted.rglob("*.ipynb")))
            args.assignments = sorted({p.parent.name for p in submitted.rglob("*.ipynb")})
            print(f"the demo class: {notebooks} notebooks")
        else:
            notebooks = build_class(submitted, args.students, args.assignments)
            print(f"{notebooks} notebooks: {args.students} students x {len(args.assignments)} assignments "
                  f"({', '.join(args.assignments)})")
        ours = {jobs: timed(f"python -m autograder grade --jobs {jobs}",
                            lambda: grade_class(submitted, tmp / f"out{jobs}", jobs=jobs, progress=False),
                            notebooks) for jobs in (1, 2)}
        root = course_copy(tmp / "course")
        for assignment in args.assignments:
            nbgrader(root, "generate_assignment", assignment)
        shutil.copytree(submitted, root / "submitted")
        failures = []

        def plain():
            for assignment in args.assignments:
                try:
                    nbgrader(root, "autograde", assignment)
                except subprocess.CalledProcessError:  # nbgrader stops on some broken notebooks
                    failures.append(assignment)
        base = timed("nbgrader autograde (sequential)", plain, notebooks)
        if failures:
            print(f"  (nbgrader autograde exited with an error for: {', '.join(failures)})")
        for jobs, seconds in ours.items():
            print(f"speed-up over sequential nbgrader at --jobs {jobs}: {base / seconds:.2f}x")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
