"""``python -m autograder extension ASSIGNMENT STUDENT --hours H``: more time for one student."""

from __future__ import annotations

import sys
from pathlib import Path

from . import options


def run(args) -> int:
    from nbgrader.api import MissingEntry

    from ..grading.names import terminal
    from ..grading.store.gradebook import StoreBusy
    from ..grading.store.views import CSV_COLUMNS, duration, grade_rows, missing_submission, write_csv

    if not 0 <= args.hours <= _MAX_HOURS:  # NaN, negative, or past what a datetime holds
        print(f"error: --hours must be between 0 and {_MAX_HOURS} (0 removes an extension)", file=sys.stderr)
        return 2
    try:
        with options.store_of(args) as store:
            try:
                store.gb.find_submission(args.assignment, args.student)
            except MissingEntry:
                said = missing_submission(store, args.assignment, args.student)
                print(f"error: {terminal(said)}; nothing was changed", file=sys.stderr)
                return 1
            if store.duedate(args.assignment) is None:  # nothing to extend: refused, the gradebook unchanged
                print(
                    f"error: {args.assignment} has no due date in the gradebook, so no submission of it is late and "
                    "an extension would change nothing; set one first (nbgrader db assignment add ID --duedate WHEN, "
                    "or grade --duedate ID=WHEN); nothing was changed",
                    file=sys.stderr,
                )
                return 1  # what the gradebook lacks, as a missing submission (2 is for a bad argument)
            recorded = store.grant_extension(args.assignment, args.student, args.hours)
            submission = store.gb.find_submission(args.assignment, args.student)
            due, still_late = submission.duedate, submission.total_seconds_late
            penalty = submission.late_submission_penalty or 0
            grades = write_csv(Path(args.out) / "grades.csv", CSV_COLUMNS, grade_rows(store))
    except (FileNotFoundError, MissingEntry, StoreBusy) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(
        f"{args.student} has {args.hours:g} h more for {args.assignment} (due {due} UTC): "
        f"score {recorded.old:g} → {recorded.new:g}. Rewrote {grades}; run export again for the exports."
    )
    if still_late > 0 and penalty > 0:
        print(
            f"note: the submission is still {duration(still_late)} late with this extension "
            f"(submitted {duration(still_late + args.hours * 3600)} after the due date without it), "
            f"so the late-submission penalty ({penalty:g} points) still applies; give a longer extension to remove it."
        )
    return 0


_MAX_HOURS = 24 * 366 * 5  # five years: any term's extension, far from datetime's end


def add(commands) -> None:
    extension = commands.add_parser(
        "extension", help="give a student more time for an assignment (nbgrader's SubmittedAssignment.extension)"
    )
    extension.add_argument("assignment")
    extension.add_argument("student")
    extension.add_argument("--hours", type=float, required=True, help="hours added to the due date")
    extension.add_argument("--out", default="grading-output", help="the grade run's OUT (its gradebook.db)")
    extension.add_argument("--db", default=None, help="the gradebook (default: OUT/gradebook.db)")
    extension.add_argument("--course", default=None, help="an nbgrader course folder whose gradebook to use")
    extension.set_defaults(run=run)
