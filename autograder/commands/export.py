"""``python -m autograder export``: questions.csv, summary.csv and canvas.csv from the gradebook."""

from __future__ import annotations

import sys
from pathlib import Path

from . import options


def run(args) -> int:
    from nbgrader.api import SubmittedAssignment

    from ..grading.names import terminal
    from ..grading.out.exports import ambiguous_in_roster, export_all, not_in_roster
    from ..grading.store.gradebook import StoreBusy

    roster = Path(args.canvas_roster) if args.canvas_roster else None
    try:
        with options.store_of(args) as store:
            if not store.gb.db.query(SubmittedAssignment).count():
                said = f"nothing to export: the gradebook {store.db_url} holds no graded submission (grade first)"
                print(terminal(said), file=sys.stderr)
                return 1
            written = export_all(store, Path(args.out), roster)
            missing = not_in_roster(store, roster) if roster else []
            clashes = ambiguous_in_roster(store, roster) if roster else []
    except (FileNotFoundError, ValueError, StoreBusy) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    for path in written:
        print(f"Wrote {path}")
    for line in clashes:
        print(f"note: {terminal(line)}: canvas.csv gives that row no Canvas id (fix the roster)")
    for student in missing:
        print(
            f"note: {terminal(student)} is not in {roster.name} (by ID, SIS User ID or SIS Login ID): "
            "canvas.csv has no Canvas id for them, and Canvas's import will not match that row"
        )
    return 0


def add(commands) -> None:
    export = commands.add_parser(
        "export", help="write questions.csv, summary.csv and canvas.csv (Canvas's gradebook import) from the gradebook"
    )
    export.add_argument("--out", default="grading-output", help="where the CSV files go (default grading-output)")
    export.add_argument(
        "--db", default=None, help="the gradebook (default: OUT/gradebook.db; with --course, the course's)"
    )
    export.add_argument("--course", default=None, help="an nbgrader course folder whose gradebook to export")
    export.add_argument(
        "--canvas-roster",
        default=None,
        metavar="CSV",
        help="Canvas's own gradebook export: its ID, SIS ids and sections, and its assignment columns, are used",
    )
    export.set_defaults(run=run)
