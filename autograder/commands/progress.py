"""``python -m autograder progress``: where the learner stands across the exercises.

Runs each exercise of the learner's folder (``my-work/exercises/``) top to bottom in a fresh
process, with the hidden tests where the course folder has ``solutions/`` (else the visible checks
only; ``--visible-only`` chooses them), prints a table of every question (points, passed or the
first line of the cause, not answered yet) and records it in ``my-work/.progress.json``, from which
the start page's table is shown without running anything (``autograder.check.standing``,
``autograder.grading.runs.learner``).
"""

from __future__ import annotations

import sys
import time
from datetime import UTC, datetime
from pathlib import Path


def run(args) -> int:
    # The fork server starts first (these imports are light): it imports torch while this process
    # imports the rest.
    from ..grading.sandbox.container import Sandbox, SandboxError, extras_for
    from ..grading.sandbox.limits import Limits
    from ..lessons import COURSE_ROOT, LEARNER_FOLDER

    started = time.monotonic()
    course = Path(args.course).resolve() if args.course else COURSE_ROOT
    mine = course / LEARNER_FOLDER.name
    if not (mine / "exercises").is_dir():
        print(
            f"No exercises of yours in {mine} yet: ./course lab makes your copies "
            "(or python -m autograder workspace), then this command checks them.",
            file=sys.stderr,
        )
        return 1
    from ..check.standing import exercise_paths

    released = exercise_paths(course)
    unknown = [e for e in args.exercise or [] if e not in released]
    if unknown:
        print(
            f"error: no exercise {', '.join(unknown)} in {course / 'exercises'}: "
            f"the exercises are {', '.join(released)}. Nothing was checked.",
            file=sys.stderr,
        )
        return 2
    hidden = (course / "solutions").is_dir() and not args.visible_only
    limits = Limits(cell_timeout=args.cell_timeout, total_timeout=args.total_timeout)
    sources = (course / ("solutions" if hidden else "exercises")).glob("*/*.ipynb")
    sandbox = Sandbox(limits, sandboxed=False, extras=extras_for(p.read_text("utf-8") for p in sources))
    try:
        sandbox.launch()
        from ..check.standing import NOT_CHECKED, standing, write_record
        from ..grading.runs.learner import check_exercises

        checked = check_exercises(course, mine, hidden, limits, args.exercise or None, sandbox)
    except SandboxError as error:
        print(f"error: could not start the process that runs your notebooks: {error}", file=sys.stderr)
        return 2
    finally:
        sandbox.close()
    seconds = time.monotonic() - started
    ran = [e.exercise for e in checked.exercises]  # before the kept results of the others join them
    if args.exercise:  # a partial check keeps what the last whole check found of the others
        before = standing(mine).exercises
        kept = [e for e in before if e.exercise not in args.exercise and e.status != NOT_CHECKED]
        checked.exercises = sorted([*kept, *checked.exercises], key=lambda e: e.exercise)
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    path = write_record(mine, checked.exercises, when, checked.tests)
    if not args.quiet:
        print(standing(mine).text())
        parts = {"start-up": seconds - sum(checked.seconds.values()), **checked.seconds}
        parts = ", ".join(f"{name} {s:.1f} s" for name, s in parts.items())
        count = f"{len(ran)} exercises" if len(ran) != 1 else ran[0]
        print(f"\nChecked {count} in {seconds:.1f} s ({parts}); recorded in {path}.")
    return 0


def add(commands) -> None:
    progress = commands.add_parser(
        "progress",
        help="run each of your exercises (my-work/) in a fresh process and show where you stand",
        description=__doc__.split("\n\n")[1],
    )
    progress.add_argument("--course", help="the course folder (default: this package's)")
    progress.add_argument(
        "--visible-only", action="store_true", help="judge with the checks you can see, not the hidden tests"
    )
    progress.add_argument(
        "--exercise", action="append", metavar="ID", help="check this exercise only (repeatable), e.g. ex01_graph"
    )
    progress.add_argument("--cell-timeout", type=float, default=60.0, help="seconds a cell may run (default 60)")
    progress.add_argument(
        "--total-timeout", type=float, default=300.0, help="seconds a whole notebook may run (default 300)"
    )
    progress.add_argument("--quiet", action="store_true", help="record only, print nothing")
    progress.set_defaults(run=run)
