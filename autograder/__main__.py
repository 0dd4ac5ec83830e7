"""Command line: ``python -m autograder grade [SUBMITTED] --out OUT``, ``python -m autograder report``,
``python -m autograder release``
and ``python -m autograder explain [FILE]`` (an error text or pasted traceback; stdin without FILE)."""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from .lessons import COURSE_ROOT  # not from .grading: explain should not wait for nbformat


def _table(rows: list[dict]) -> str:
    from .grading.names import terminal  # a status or id is data: no control character reaches the terminal

    cols = ["student_id", "assignment_id", "score", "max_score", "status", "failed"]
    rows = [{c: terminal(str(r[c])) for c in cols} for r in rows]
    widths = {c: max(len(c), *(len(r[c]) for r in rows)) for c in cols}
    lines = ["  ".join(f"{c:<{widths[c]}}" for c in cols)]
    lines += ["  ".join(f"{r[c]:<{widths[c]}}" for c in cols) for r in rows]
    return "\n".join(line.rstrip() for line in lines)


def _grade(args) -> int:
    from .grading.batch import SandboxUnavailable, grade_class
    from .grading.cgroups import memory_cgroup_available
    from .grading.limits import Limits

    out = Path(args.out)
    with tempfile.TemporaryDirectory(prefix="demo-class-") as tmp:
        submitted = Path(args.submitted) if args.submitted else Path(tmp)
        if not args.submitted:
            from .grading.demo import build_demo_class

            build_demo_class(submitted)
            print(f"No SUBMITTED folder given: grading the demo class ({len(list(submitted.iterdir()))} students).")
        limits = Limits(
            cell_timeout=args.cell_timeout, total_timeout=args.total_timeout, memory=int(args.memory_limit * 1024**3)
        )
        if args.no_sandbox:
            print(
                "WARNING: --no-sandbox: submissions run with your rights, network and files. "
                "Use it only for notebooks you trust; every status in grades.csv says (no sandbox)."
            )
        elif not memory_cgroup_available():
            print(
                f"note: this machine lets the grader make no memory cgroup (that needs root and a writable "
                f"cgroup memory controller): --memory-limit {args.memory_limit:g} GiB bounds each process of a "
                "submission alone, not all of them together."
            )
        try:
            rows = grade_class(
                submitted, out, Path(args.solutions), jobs=args.jobs, limits=limits, sandboxed=not args.no_sandbox
            )
        except FileNotFoundError as error:
            print(f"error: {error}", file=sys.stderr)
            return 2
        except SandboxUnavailable as error:
            print(f"error: refusing to grade without a sandbox: {error}", file=sys.stderr)
            return 2
    print(_table(rows) if rows else "No submissions found (expected SUBMITTED/<student>/<assignment>/*.ipynb).")
    print(f"\nWrote {out / 'grades.csv'} and feedback pages under {out / 'feedback'}/")
    from .grading.report import after_grade  # the class report, from the gradebook the run wrote

    print(after_grade(out, getattr(args, "db", None), Path(args.solutions)), end="")
    return 0


def _report(args) -> int:
    from .grading.report import report_from_gradebook, terminal_summary

    try:
        summary = report_from_gradebook(args.db, Path(args.out), Path(args.solutions))
    except FileNotFoundError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(terminal_summary(summary, Path(args.out)))
    return 0


def _release(args) -> int:
    from .grading.release import generate, stale

    if args.check:
        outdated = stale()
        for path in outdated:
            print(f"stale: exercises/{path}")
        print("exercises/ is up to date." if not outdated else "Run: python -m autograder release")
        return 1 if outdated else 0
    print(f"Generated {generate()}")
    return 0


def _explain(args) -> int:
    from .explain import explain

    if args.file in (None, "-"):
        text = sys.stdin.read()
    else:
        try:
            text = Path(args.file).read_text(encoding="utf-8", errors="replace")
        except OSError as error:
            print(f"error: {error}", file=sys.stderr)
            return 2
    print(explain(text))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    grade = commands.add_parser("grade", help="grade a class (with no folder: the demo class)")
    grade.add_argument("submitted", nargs="?", help="SUBMITTED/<student_id>/<assignment_id>/<notebook>.ipynb")
    grade.add_argument("--out", default="grading-output", help="where grades.csv and feedback/ go")
    grade.add_argument(
        "--solutions",
        default=str(COURSE_ROOT / "solutions"),
        help="the nbgrader source folder (default: the course's solutions/)",
    )
    grade.add_argument("--jobs", type=int, default=None, help="parallel sandboxes (default: CPU cores)")
    grade.add_argument("--cell-timeout", type=float, default=60, help="seconds per cell (default 60)")
    grade.add_argument("--total-timeout", type=float, default=300, help="seconds per notebook (default 300)")
    grade.add_argument("--memory-limit", type=float, default=2, help="GiB of memory a submission may add (default 2)")
    grade.add_argument(
        "--no-sandbox",
        action="store_true",
        help="run submissions without the bubblewrap sandbox (only for notebooks you trust)",
    )
    grade.set_defaults(run=_grade)
    report = commands.add_parser("report", help="the class report (what the class got wrong) from the gradebook")
    report.add_argument("--db", default=None, help="nbgrader's gradebook URL (default: OUT/gradebook.db)")
    report.add_argument("--out", default="grading-output", help="where report.html and report.csv go")
    report.add_argument("--solutions", default=str(COURSE_ROOT / "solutions"), help="the nbgrader source folder")
    report.set_defaults(run=_report)
    release = commands.add_parser("release", help="generate exercises/ from solutions/ with nbgrader")
    release.add_argument("--check", action="store_true", help="only report stale release notebooks")
    release.set_defaults(run=_release)
    explain = commands.add_parser(
        "explain", help="explain an autograd error or warning (a pasted traceback) read from FILE or stdin"
    )
    explain.add_argument("file", nargs="?", help="a file holding the error text (default: stdin)")
    explain.set_defaults(run=_explain)
    args = parser.parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
