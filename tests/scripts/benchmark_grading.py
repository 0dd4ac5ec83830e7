"""Benchmark: grade a synthetic class with our command (--jobs 1 and 2), optionally with an
earlier version of the grader, and with plain sequential `nbgrader autograde`, on the same
submissions, in one run. Not a test; run it by hand from the repository root:

    PYTHONPATH=$PWD .venv/bin/python tests/scripts/benchmark_grading.py [--students 40] [--assignments ex01_graph ...]
        [--demo] [--baseline-ref GIT_REF] [--no-nbgrader] [--repeat N]
    PYTHONPATH=$PWD .venv/bin/python tests/scripts/benchmark_grading.py --growth 40 160 640 [--growth-jobs 1 2]

``--baseline-ref afb1b5e`` also grades the class with the grader of that commit (afb1b5e: the
last one before the sandbox, forks of a warm worker process) at --jobs 1 and 2: its
``autograder/`` and ``solutions/`` are taken with ``git archive`` into a temporary folder and run
there in a subprocess, with ``PYTHONPATH`` pointing at it; the repository is not touched. It
prints how our time compares (ours / baseline: 1.10 is 10 % slower) and on how many notebooks
both gave the same score. On a shared machine use ``--repeat 3``: the best of three runs of each,
interleaved, is far steadier than one run. For the lead's check ("within 10 % of the grader
before the sandbox"):

    PYTHONPATH=$PWD .venv/bin/python tests/scripts/benchmark_grading.py --baseline-ref afb1b5e --repeat 3

The class: every student submits every assignment, a realistic mix built from the demo class:
mostly correct answers and typical mistakes, some untouched releases, some truncated files and
some answers that kill their process. Prints seconds per notebook, the speed-up, what a fresh
Jupyter kernel plus `import torch` costs against starting a grading sandbox and one submission
process in it, and where our time per notebook goes: sandbox start (once per grading thread),
fork + channel, cells, reaping, the outside re-check (verdict), the feedback page, the rest of
grading one notebook (reading, assembling), and the solutions' own runs (once per assignment);
and a notebook's cost against its cells' own time: the run's wall time per notebook (start-up
included) over the time the submission processes spent in IPython's ``run_cell`` for the graded
notebooks' cells, measured inside each process (``CellRun.seconds``; the solutions' runs, the
process's set-up, the channel and the judging are not in it).

``--growth 40 160 640`` instead grades classes of that many ex01 notebooks, each in a fresh
interpreter, at each of ``--growth-jobs``: seconds per notebook, the slope between sizes (what one
more notebook costs once the sandboxes started), both against the cells' own time, the grader's
peak RSS (its own process, ``VmHWM``) and the peak of the proportional set size (``Pss``) of
the grader with every process below it (containers, fork servers, submission processes), sampled
every 0.2 s.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from contextlib import contextmanager
from pathlib import Path
from typing import ClassVar

import nbformat

from autograder.grading.judge import grade_one
from autograder.grading.nbgrader_glue.cli import course_copy, nbgrader
from autograder.grading.runs import batch
from autograder.grading.runs.batch import grade_class, load_sources
from autograder.grading.runs.demo import build_demo_class
from autograder.grading.sandbox.container import Sandbox
from autograder.grading.sandbox.forkserver import descendants
from autograder.grading.sandbox.limits import Limits
from autograder.grading.sandbox.runner import run_cells
from autograder.grading.store.gradebook import Store
from autograder.lessons import COURSE_ROOT

CRASH = "import os\nos._exit(1)\n"
SOLUTION_RUNS = "solution runs (once per assignment)"
STORE = "store: "  # the gradebook's pieces, run in the grader's main thread alongside the grading threads


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


def report(label: str, seconds: float, notebooks: int) -> float:
    print(f"{label:<52} {seconds:7.1f} s  {seconds / notebooks:6.2f} s/notebook", flush=True)
    return seconds


def timed(label: str, fn, notebooks: int):
    start = time.perf_counter()
    result = fn()
    seconds = report(label, time.perf_counter() - start, notebooks)
    return seconds, result


class Phases:
    """Where grading time goes: wraps the grader's pieces with ``time.perf_counter`` while active.

    Times are exclusive (a piece's time without the pieces it calls), summed over the grading
    threads; inside a solution's run every piece but the sandbox's start and close counts as the
    solution's run.
    """

    # (object, attribute, phase): the names as the callers look them up
    PIECES: ClassVar[list] = [
        (Sandbox, "launch", "sandbox start (bwrap)"),
        (Sandbox, "ready", "sandbox start (waiting for its fork server's imports)"),  # a call per fork
        (Sandbox, "close", "sandbox close"),
        (Sandbox, "open_channel", "fork + channel"),
        (Sandbox, "reap", "reap (kill, clean /tmp)"),
        (grade_one, "run_cells", "cells"),
        (grade_one, "verdict", "re-check (verdict)"),
        (batch, "prepare_notebook", "read, assemble, withhold (the preparing thread)"),
        (batch, "judge_run", "judging, but the re-check (the main thread)"),
        (batch, "write_feedback", "feedback page"),
        (batch, "solution_records", SOLUTION_RUNS),
        (Store, "__init__", STORE + "open the gradebook"),
        (Store, "prepare", STORE + "the assignments' structure"),
        (Store, "record_all", STORE + "record the submissions graded meanwhile (one transaction)"),
        (batch, "grade_rows", STORE + "read the views' rows"),
        (batch, "write_csv", STORE + "write grades.csv"),
    ]

    # kept apart even when a solution's run starts the sandbox
    OWN = ("sandbox start (bwrap)", "sandbox start (waiting for its fork server's imports)", "sandbox close")

    def __init__(self):
        self.seconds, self.calls = defaultdict(float), defaultdict(int)
        self._local, self._lock = threading.local(), threading.Lock()
        self.own_cells = 0.0  # the cells' own time, in their processes (CellRun.seconds), solutions' left out

    def _wrap(self, fn, phase: str):
        @functools.wraps(fn)
        def timed_piece(*args, **kwargs):
            stack = self._local.__dict__.setdefault("stack", [])
            in_solution = any(frame[0] == SOLUTION_RUNS for frame in stack)
            label = SOLUTION_RUNS if in_solution and phase not in self.OWN else phase
            frame = [label, 0.0]
            stack.append(frame)
            start = time.perf_counter()
            try:
                result = fn(*args, **kwargs)
                if phase == "cells" and label == phase:
                    with self._lock:
                        self.own_cells += sum(cell.seconds for cell in result.cells)
                return result
            finally:
                elapsed = time.perf_counter() - start
                stack.pop()
                if stack:
                    stack[-1][1] += elapsed
                with self._lock:
                    self.seconds[label] += elapsed - frame[1]
                    self.calls[label] += label == phase  # a piece folded into a solution's run is not a call

        return timed_piece

    @contextmanager
    def active(self):
        originals = [(owner, name, getattr(owner, name)) for owner, name, _ in self.PIECES]
        try:
            for (owner, name, phase), (_, _, fn) in zip(self.PIECES, originals):
                setattr(owner, name, self._wrap(fn, phase))
            yield self
        finally:
            for owner, name, fn in originals:
                setattr(owner, name, fn)

    def print(self, notebooks: int, wall: float) -> None:
        total = sum(self.seconds.values())
        print(f"  where the time went (summed over threads; wall {wall:.1f} s):")
        for phase in dict.fromkeys(phase for _, _, phase in self.PIECES):
            if phase in self.seconds:
                s = self.seconds[phase]
                print(f"    {phase:<50} {s:7.2f} s  {s / notebooks:6.3f} s/notebook  ({self.calls[phase]} calls)")
        print(f"    {'(measured pieces, total)':<50} {total:7.2f} s  {total / notebooks:6.3f} s/notebook")
        store = sum(s for phase, s in self.seconds.items() if phase.startswith(STORE))
        print(f"    the store's pieces: {store:.2f} s, {100 * store / wall:.1f} % of the wall time")
        print(f"  {cost_line(wall, notebooks, self.own_cells)}")


def cost_line(wall: float, notebooks: int, own_cells: float) -> str:
    """A notebook's cost against its cells' own time: the wall time of the whole run (start-up,
    solutions and all) per notebook, over the time the submission processes spent running the
    graded notebooks' cells (``CellRun.seconds``: measured inside each process around IPython's
    ``run_cell``; its own set-up, the channel and judging are not in it), per notebook."""
    own = own_cells / notebooks
    return (
        f"a notebook's cost {wall / notebooks:.3f} s (wall / notebooks) against its cells' own time "
        f"{own:.3f} s (in the submission process): {wall / notebooks / own if own else float('nan'):.2f}x"
    )


BASELINE_SCRIPT = """\
import inspect, json, sys, time
from pathlib import Path
import autograder
assert Path(autograder.__file__).resolve().is_relative_to(Path.cwd().resolve()), autograder.__file__
from autograder.grading.runs.batch import grade_class
solutions = ["solutions"] if "solutions" in inspect.signature(grade_class).parameters else []  # a later signature
start = time.perf_counter()
rows = grade_class(Path(sys.argv[1]), Path(sys.argv[2]), *map(Path, solutions), jobs=int(sys.argv[3]), progress=False)
print(json.dumps({"seconds": time.perf_counter() - start, "rows": rows}))
"""


def baseline_tree(ref: str, folder: Path) -> Path:
    """``autograder/`` and ``solutions/`` of commit ``ref`` in ``folder`` (git archive: the
    repository and its worktrees are left alone)."""
    folder.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "-C", str(COURSE_ROOT), "archive", ref, "autograder", "solutions"], capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return folder


def grade_with_baseline(tree: Path, submitted: Path, out: Path, jobs: int) -> tuple[float, list]:
    """Grade with the grader in ``tree`` in a subprocess; its own grade_class time and rows."""
    env = dict(os.environ, PYTHONPATH=str(tree))
    done = subprocess.run(
        [sys.executable, "-c", BASELINE_SCRIPT, str(submitted), str(out), str(jobs)],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise RuntimeError(f"the baseline grader failed:\n{done.stderr[-3000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return result["seconds"], result["rows"]


def same_scores(ours: list, theirs: list) -> tuple[int, list]:
    """How many notebooks got the same score from both graders, and the others."""
    by_key = {(r["student_id"], r["assignment_id"]): r for r in theirs}
    differ = [
        (
            r["student_id"],
            r["assignment_id"],
            r["score"],
            by_key.get((r["student_id"], r["assignment_id"]), {}).get("score"),
        )
        for r in ours
        if by_key.get((r["student_id"], r["assignment_id"]), {}).get("score") != r["score"]
    ]
    return len(ours) - len(differ), differ


def start_up_costs() -> None:
    """What a fresh Jupyter kernel with torch costs, against a sandbox and a submission in it."""
    from jupyter_client.manager import start_new_kernel

    start = time.perf_counter()
    km, kc = start_new_kernel(kernel_name="python3", stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    started = time.perf_counter()
    kc.execute_interactive("import torch", timeout=120)
    imported = time.perf_counter()
    kc.stop_channels()
    km.shutdown_kernel(now=True)
    limits = Limits()
    box_start = time.perf_counter()
    with Sandbox(limits) as box:
        box_ready = time.perf_counter()
        run_cells(["import torch"], box, limits)
        one = time.perf_counter() - box_ready
    print(
        f"Jupyter kernel start {started - start:.2f} s + import torch in it {imported - started:.2f} s; "
        f"grading sandbox start (once per thread) {box_ready - box_start:.2f} s; one submission process "
        f"in it running `import torch` (fork, channel, cell, reap): {one:.2f} s"
    )


def grade_once(submitted: Path, out: Path, jobs: int) -> None:
    """Grade ``submitted`` once in this process (``--grade-once``, run by :func:`growth` in a fresh
    interpreter) and print, as JSON, the wall time of ``grade_class``, the cells' own time and this
    process's peak RSS (``VmHWM``: the grader alone, its threads included, not its children; not
    ``ru_maxrss``, which Linux carries over from the process that forked it across exec)."""
    with Phases().active() as phases:
        start = time.perf_counter()
        rows = grade_class(submitted, out, COURSE_ROOT / "solutions", jobs=jobs, progress=False)
        seconds = time.perf_counter() - start
    print(
        json.dumps(
            {
                "seconds": seconds,
                "own_cells": phases.own_cells,
                "rows": len(rows),
                "maxrss_kib": int(re.search(r"VmHWM:\s+(\d+) kB", Path("/proc/self/status").read_text()).group(1)),
            }
        )
    )


def _memory_kib(pid: int) -> int:
    """A process's proportional set size (``Pss`` of ``/proc/PID/smaps_rollup``: pages shared
    with others, as a fork server's with its submission processes, count by their share), KiB."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def _tree(root: int) -> list[int]:
    """``root`` and every process below it (the sandboxes, their fork servers and submissions)."""
    return [root, *descendants(root)]


def growth(tmp: Path, sizes: list[int], jobs_list: list[int]) -> None:
    """Grade classes of ``sizes`` x ex01 at each of ``jobs_list``, each in a fresh interpreter:
    seconds per notebook, the slope between sizes (a notebook's cost once started), the cells'
    own time, the grader's peak RSS (its own process) and the peak of the proportional memory of
    the grader with every process below it (sampled every 0.2 s)."""
    print(
        f"\n{'notebooks':>9} {'jobs':>4} {'seconds':>8} {'s/notebook':>10} {'slope s/nb':>10} "
        f"{'cells s/nb':>10} {'cost/cells':>10} {'slope/cells':>11} {'grader RSS':>10} {'with children':>13}"
    )
    for jobs in jobs_list:
        last = None
        for size in sizes:
            submitted = tmp / f"growth-{size}" / "submitted"
            if not submitted.exists():
                build_class(submitted, size, ["ex01_graph"])
            out = tmp / f"growth-{size}" / f"out{jobs}"
            command = [sys.executable, __file__, "--grade-once", str(submitted), str(out), str(jobs)]
            grader = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
            peak, stop = [0], threading.Event()

            def sample(grader=grader, peak=peak, stop=stop):
                while not stop.wait(0.2):
                    peak[0] = max(peak[0], sum(_memory_kib(pid) for pid in _tree(grader.pid)))

            sampler = threading.Thread(target=sample)
            sampler.start()
            stdout, _ = grader.communicate()
            stop.set()
            sampler.join()
            if grader.returncode != 0:
                raise RuntimeError(f"grading {size} notebooks failed")
            done = json.loads(stdout.strip().splitlines()[-1])
            seconds, own = done["seconds"], done["own_cells"] / size
            slope = (seconds - last[1]) / (size - last[0]) if last else float("nan")
            print(
                f"{size:>9} {jobs:>4} {seconds:>8.1f} {seconds / size:>10.3f} {slope:>10.3f} {own:>10.3f} "
                f"{seconds / size / own:>9.2f}x {slope / own:>10.2f}x {done['maxrss_kib'] / 1024:>7.0f} MiB "
                f"{peak[0] / 1024:>9.0f} MiB",
                flush=True,
            )
            last = (size, seconds)
            shutil.rmtree(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=40)
    parser.add_argument("--assignments", nargs="*", default=sorted(load_sources(COURSE_ROOT / "solutions")))
    parser.add_argument("--demo", action="store_true", help="grade exactly the demo class instead")
    parser.add_argument(
        "--baseline-ref",
        metavar="GIT_REF",
        help="also grade with the grader of this commit (e.g. afb1b5e, before the sandbox)",
    )
    parser.add_argument("--no-nbgrader", action="store_true", help="skip plain nbgrader autograde")
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="grade N times with each of our settings (and the baseline), interleaved; "
        "the best time counts (the load of a shared machine varies)",
    )
    parser.add_argument(
        "--growth",
        metavar="N",
        type=int,
        nargs="*",
        help="instead: how the cost grows, grading N x ex01 for each N (e.g. 40 160 640) in a fresh "
        "interpreter each, at each of --growth-jobs",
    )
    parser.add_argument("--growth-jobs", metavar="J", type=int, nargs="*", default=[1, 2])
    parser.add_argument("--grade-once", nargs=3, metavar=("SUBMITTED", "OUT", "JOBS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.grade_once:
        submitted, out, jobs = args.grade_once
        grade_once(Path(submitted), Path(out), int(jobs))
        return
    load = os.getloadavg()[0]
    print(f"load average {load:.1f} on {os.cpu_count()} cores (other work on the machine skews these figures)")
    if args.growth:
        with tempfile.TemporaryDirectory() as tmp:
            growth(Path(tmp), sorted(args.growth), args.growth_jobs)
        return
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
            print(
                f"{notebooks} notebooks: {args.students} students x {len(args.assignments)} assignments "
                f"({', '.join(args.assignments)})"
            )
        tree = baseline_tree(args.baseline_ref, tmp / "baseline") if args.baseline_ref else None
        ours, theirs, rows, their_rows, best_phases = {}, {}, {}, {}, {}
        for round_ in range(args.repeat):  # interleaved, so that a change of load hits both graders
            for jobs in (1, 2):
                with Phases().active() as phases:
                    seconds, rows[jobs] = timed(
                        f"python -m autograder grade --jobs {jobs}",
                        functools.partial(
                            grade_class,
                            submitted,
                            tmp / f"out{jobs}-{round_}",
                            COURSE_ROOT / "solutions",
                            jobs=jobs,
                            progress=False,
                        ),
                        notebooks,
                    )
                if seconds < min(ours.get(jobs, [float("inf")])):
                    best_phases[jobs] = phases
                ours.setdefault(jobs, []).append(seconds)
                if tree is not None:
                    seconds, their_rows[jobs] = grade_with_baseline(
                        tree, submitted, tmp / f"baseline{jobs}-{round_}", jobs
                    )
                    theirs.setdefault(jobs, []).append(
                        report(f"grader of {args.baseline_ref} --jobs {jobs}", seconds, notebooks)
                    )
        best = {jobs: min(times) for jobs, times in ours.items()}
        print(f"\nbest of {args.repeat}:")
        for jobs in (1, 2):
            report(f"python -m autograder grade --jobs {jobs}", best[jobs], notebooks)
            best_phases[jobs].print(notebooks, best[jobs])
            if tree is not None:
                baseline = report(f"grader of {args.baseline_ref} --jobs {jobs}", min(theirs[jobs]), notebooks)
                print(
                    f"  ours / baseline at --jobs {jobs}: {best[jobs] / baseline:.2f} "
                    f"({(best[jobs] / baseline - 1) * 100:+.0f} %)"
                )
                same, differ = same_scores(rows[jobs], their_rows[jobs])
                print(
                    f"  same score on {same} of {len(rows[jobs])} notebooks"
                    + "".join(f"\n    {s}/{a}: ours {o}, baseline {b}" for s, a, o, b in differ[:10])
                )
        if not args.no_nbgrader:
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

            base, _ = timed("nbgrader autograde (sequential)", plain, notebooks)
            if failures:
                print(f"  (nbgrader autograde exited with an error for: {', '.join(failures)})")
            for jobs, seconds in best.items():
                print(f"speed-up over sequential nbgrader at --jobs {jobs}: {base / seconds:.2f}x")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
