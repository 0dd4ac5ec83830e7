"""Command line: ``python -m autograder grade [SUBMITTED] --out OUT`` and ``python -m autograder release``."""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from .grading.batch import COURSE_ROOT


def _table(rows: list[dict]) -> str:
    cols = ["student_id", "assignment_id", "score", "max_score", "status", "failed"]
    widths = {c: max(len(c), *(len(str(r[c])) for r in rows)) for c in cols}
    lines = ["  ".join(f"{c:<{widths[c]}}" for c in cols)]
    lines += ["  ".join(f"{str(r[c]):<{widths[c]}}" for c in cols) for r in rows]
    return "\n".join(line.rstrip() for line in lines)


def _grade(args) -> int:
    from .grading.batch import grade_class

    out = Path(args.out)
    with tempfile.TemporaryDirectory(prefix="demo-class-") as tmp:
        submitted = Path(args.submitted) if args.submitted else Path(tmp)
        if not args.submitted:
            from .grading.demo import build_demo_class
            build_demo_class(submitted)
            print(f"No SUBMITTED folder given: grading the demo class ({len(list(submitted.iterdir()))} students).")
        try:
            rows = grade_class(submitted, out, Path(args.solutions), jobs=args.jobs,
                               cell_timeout=args.cell_timeout)
        except FileNotFoundError as error:
            print(f"error: {error}", file=sys.stderr)
            return 2
    print(_table(rows) if rows else "No submissions found (expected SUBMITTED/<student>/<assignment>/*.ipynb).")
    print(f"\nWrote {out / 'grades.csv'} and feedback pages under {out / 'feedback'}/")
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    grade = commands.add_parser("grade", help="grade a class (with no folder: the demo class)")
    grade.add_argument("submitted", nargs="?", help="SUBMITTED/<student_id>/<assignment_id>/<notebook>.ipynb")
    grade.add_argument("--out", default="grading-output", help="where grades.csv and feedback/ go")
    grade.add_argument("--solutions", default=str(COURSE_ROOT / "solutions"),
                       help="the nbgrader source folder (default: the course's solutions/)")
    grade.add_argument("--jobs", type=int, default=None, help="parallel workers (default: CPU cores)")
    grade.add_argument("--cell-timeout", type=float, default=120, help="seconds per cell")
    grade.set_defaults(run=_grade)
    release = commands.add_parser("release", help="generate exercises/ from solutions/ with nbgrader")
    release.add_argument("--check", action="store_true", help="only report stale release notebooks")
    release.set_defaults(run=_release)
    args = parser.parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
