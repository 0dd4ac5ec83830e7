"""Grading on submit under a burst: N submissions from several learners at once, through nbgrader's
exchange, to ``python -m autograder serve``; how long from each submit to its feedback page in the
exchange, and whether any is lost.

    .venv/bin/python tests/scripts/benchmark_submit.py --submissions 60
    .venv/bin/python tests/scripts/benchmark_submit.py --submissions 300 --learners 30

A course in a temporary folder holds the course's ``solutions/<assignment>`` (default ex01_graph) and
an exchange of its own; the service runs as a process of its own (``--jobs``, default one per
core) and is started and warm (sandboxes, references) before the burst. The learners (``--learners``,
default 10) each submit their share as fast as nbgrader's own ``ExchangeSubmit`` can, all at once, in
threads of this process; their notebooks are the demo class's (correct, blank, each typical
mistake), in turn. For each submission, submit→feedback is the time from ``nbgrader submit``
returning to its page appearing where ``fetch_feedback`` looks (the hash of its secret). A
submission is lost when its page has not appeared ``--timeout`` seconds after the last submit, or
when the service's queue does not hold it exactly once, graded.

Printed: ``submit→feedback: p50 X s, p95 Y s, max Z s; lost L of N``, the service's peak memory
(its own process, ``VmHWM``) and the peak proportional set size of the service with its sandboxes,
the CPU time they used (what bounds the drain on an idle machine of as many cores), and what else
ran on the machine meanwhile (the load average and the busiest other processes).
"""

from __future__ import annotations

import argparse
import os
import re
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import nbformat

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from autograder.grading.runs.batch import load_sources  # noqa: E402
from autograder.grading.runs.demo import build_demo_class  # noqa: E402
from autograder.grading.sandbox.forkserver import descendants  # noqa: E402
from tests.grading.service.exchange import Course  # noqa: E402


def pss_kib(pid: int) -> int:
    """The proportional set size of ``pid`` in KiB (0 when it ended)."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            return next((int(line.split()[1]) for line in f if line.startswith("Pss:")), 0)
    except OSError:
        return 0


def cpu_seconds(root: int) -> float:
    """CPU time (user + system, seconds) of ``root`` and every process below it, with what their
    ended children used (``cutime``, ``cstime``: a fork server reaps each submission's process)."""
    tick, total = os.sysconf("SC_CLK_TCK"), 0
    for pid in [root, *descendants(root)]:
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += sum(int(x) for x in fields[11:15])  # utime, stime, cutime, cstime
    return total / tick


def others(own: set[int], count: int = 5) -> list[str]:
    """The busiest processes that are not the benchmark's (``ps``), as lines."""
    ps = subprocess.run(["ps", "-eo", "pid,pcpu,rss,args", "--sort=-pcpu"], capture_output=True, text=True)
    lines = []
    for line in ps.stdout.splitlines()[1:]:
        pid = int(line.split()[0])
        if pid not in own:
            lines.append(line[:140])
        if len(lines) >= count:
            break
    return lines


class Service:
    """``python -m autograder serve`` on the course, its output kept, its memory sampled."""

    def __init__(self, course: Course, jobs: int | None):
        env = dict(os.environ, JUPYTER_CONFIG_DIR=str(course.root / "jupyter"), PYTHONUNBUFFERED="1")
        command = [sys.executable, "-m", "autograder", "serve", "--course", str(course.course), "--no-check-owner"]
        command += ["--no-page"] + (["--jobs", str(jobs)] if jobs else [])
        self.process = subprocess.Popen(command, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                        text=True)  # fmt: skip
        self.lines: list[str] = []
        self.peak_pss = 0
        self.running = True
        threading.Thread(target=lambda: self.lines.extend(self.process.stdout), daemon=True).start()
        threading.Thread(target=self._sample, daemon=True).start()

    def _sample(self) -> None:
        while self.running:
            tree = [self.process.pid, *descendants(self.process.pid)]
            self.peak_pss = max(self.peak_pss, sum(pss_kib(pid) for pid in tree))
            time.sleep(0.2)

    def vm_hwm_kib(self) -> int:
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        return int(re.search(r"VmHWM:\s+(\d+) kB", status).group(1))

    def wait_for(self, text: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not any(text in line for line in self.lines):
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("the service did not start:\n" + "".join(self.lines[-40:]))
            time.sleep(0.1)

    def stop(self) -> None:
        self.running = False
        self.process.terminate()
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--submissions", type=int, default=60)
    parser.add_argument("--learners", type=int, default=10)
    parser.add_argument("--assignment", default="ex01_graph")
    parser.add_argument("--jobs", type=int, default=None, help="the service's sandboxes (default: CPU cores)")
    parser.add_argument(
        "--timeout", type=float, default=600, help="seconds after the last submit before a page is lost"
    )
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="benchmark-submit-") as tmp:
        root = Path(tmp)
        name, source = load_sources(REPO / "solutions")[args.assignment]
        release = nbformat.read(REPO / "exercises" / args.assignment / name, as_version=4)
        course = Course(root, source, args.assignment, release)
        expected = build_demo_class(root / "demo")
        notebooks = [
            nbformat.read(root / "demo" / student / args.assignment / name, as_version=4)
            for student, assignment in sorted(expected)
            if assignment == args.assignment
        ]
        service = Service(course, args.jobs)
        try:
            started = time.monotonic()
            service.wait_for("serving", 600)
            print(f"service warm in {time.monotonic() - started:.1f} s; the burst starts")
            load_before = os.getloadavg()
            cpu_before = cpu_seconds(service.process.pid)
            submitted: dict[str, float] = {}  # page -> when its submit returned
            lock = threading.Lock()

            def learner(index: int) -> None:
                for k in range(index, args.submissions, args.learners):
                    page = course.submit(f"learner{index:03}", notebook=notebooks[k % len(notebooks)])
                    with lock:
                        submitted[page] = time.monotonic()

            threads = [threading.Thread(target=learner, args=(i,)) for i in range(args.learners)]
            burst = time.monotonic()
            for thread in threads:
                thread.start()
            arrived: dict[str, float] = {}
            last_submit = None
            while True:
                with lock:
                    waiting = [page for page in submitted if page not in arrived]
                for page in waiting:
                    if course.released(page).is_file():
                        arrived[page] = time.monotonic()
                if last_submit is None and not any(t.is_alive() for t in threads):
                    last_submit = time.monotonic()
                    print(f"{len(submitted)} submissions made in {last_submit - burst:.1f} s")
                if last_submit is not None and (
                    len(arrived) == len(submitted) or time.monotonic() - last_submit > args.timeout
                ):
                    break
                time.sleep(0.05)
            load_after = os.getloadavg()
            cpu = cpu_seconds(service.process.pid) - cpu_before
            busiest = others({os.getpid(), service.process.pid, *descendants(service.process.pid)})
            own_peak, tree_peak = service.vm_hwm_kib(), service.peak_pss
        finally:
            service.stop()
        with sqlite3.connect(course.course / "grading-service" / "queue.db") as db:
            rows = db.execute("SELECT inbound, outcome FROM attempts").fetchall()
        recorded = {inbound for inbound, outcome in rows if outcome == "graded"}
        times = sorted(arrived[page] - submitted[page] for page in arrived)
        lost = len(submitted) - len(arrived) + abs(len(recorded) - len(submitted)) + (len(rows) - len(recorded))
        p95 = times[min(len(times) - 1, int(0.95 * len(times)))] if times else float("nan")
        print(
            f"submit→feedback: p50 {statistics.median(times):.2f} s, p95 {p95:.2f} s, max {max(times):.2f} s; "
            f"lost {lost} of {args.submissions}"
        )
        print(
            f"service peak memory: {own_peak / 1024:.0f} MiB (its own process, VmHWM); "
            f"{tree_peak / 1024:.0f} MiB with its sandboxes (peak Pss, sampled every 0.2 s)"
        )
        print(f"drained in {max(arrived.values(), default=burst) - burst:.1f} s after the burst began")
        cores = os.cpu_count() or 1
        print(
            f"CPU time of the service and its sandboxes: {cpu:.1f} s ({cpu / max(len(arrived), 1):.2f} s a "
            f"submission): on {cores} idle cores the burst cannot drain in less than {cpu / cores:.1f} s"
        )
        print(
            f"meanwhile on this machine: load average {load_before[0]:.1f} before, {load_after[0]:.1f} after "
            f"({os.cpu_count()} CPUs); busiest other processes:"
        )
        for line in busiest:
            print(f"    {line}")
    return 0 if lost == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
