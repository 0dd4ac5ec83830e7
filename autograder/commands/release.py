"""``python -m autograder release [--check]``: exercises/ generated from solutions/ with nbgrader."""

from __future__ import annotations


def run(args) -> int:
    from ..grading.nbgrader_glue.release import generate, stale

    if args.check:
        outdated = stale()
        for path in outdated:
            print(f"stale: exercises/{path}")
        print("exercises/ is up to date." if not outdated else "Run: python -m autograder release")
        return 1 if outdated else 0
    print(f"Generated {generate()}")
    return 0


def add(commands) -> None:
    release = commands.add_parser("release", help="generate exercises/ from solutions/ with nbgrader")
    release.add_argument("--check", action="store_true", help="only report stale release notebooks")
    release.set_defaults(run=run)
