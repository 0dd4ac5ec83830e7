"""``python -m autograder report``: the class report (what the class got wrong) from the gradebook."""

from __future__ import annotations

import sys
from pathlib import Path

from ..lessons import COURSE_ROOT


def run(args) -> int:
    from ..grading.out.report import report_from_gradebook, terminal_summary

    try:
        summary = report_from_gradebook(args.db, Path(args.out), Path(args.solutions))
    except FileNotFoundError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(terminal_summary(summary, Path(args.out)))
    return 0


def add(commands) -> None:
    report = commands.add_parser("report", help="the class report (what the class got wrong) from the gradebook")
    report.add_argument("--db", default=None, help="nbgrader's gradebook URL (default: OUT/gradebook.db)")
    report.add_argument("--out", default="grading-output", help="where report.html and report.csv go")
    report.add_argument("--solutions", default=str(COURSE_ROOT / "solutions"), help="the nbgrader source folder")
    report.set_defaults(run=run)
