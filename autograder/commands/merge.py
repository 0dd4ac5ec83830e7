"""``python -m autograder merge PARTS... --db TARGET``: shards' part gradebooks merged into one."""

from __future__ import annotations

import sys
from pathlib import Path


def run(args) -> int:
    """``merge PARTS... --db TARGET``: shards' part gradebooks into one (idempotent)."""
    from ..grading.names import counted, terminal
    from ..grading.runs.merge import merge_gradebooks
    from ..grading.store.gradebook import StoreBusy

    refused: list[str] = []
    try:
        copied = merge_gradebooks(args.parts, args.db, Path(args.out) if args.out else None, refused)
    except FileNotFoundError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except StoreBusy as error:
        print(f"error: {error}", file=sys.stderr)
        return 3
    if args.parts:
        parts = counted(len(args.parts) - len(refused), "part gradebook")
        print(f"Merged {counted(copied, 'submission')} from {parts} into {args.db}.")
    if args.out:
        print(f"Wrote {Path(args.out) / 'grades.csv'} (every submission in {args.db}).")
    for line in refused:  # each part that disagrees with the target: nothing of it was copied
        print(f"refused: {terminal(line)}", file=sys.stderr)
    return 1 if refused else 0


def add(commands) -> None:
    merge = commands.add_parser("merge", help="merge shards' part gradebooks into one gradebook (idempotent)")
    merge.add_argument("parts", nargs="*", help="part gradebooks: SQLite files or database URLs (none: only --out)")
    merge.add_argument("--db", required=True, help="the gradebook to merge into: a SQLite file or a database URL")
    merge.add_argument("--out", default=None, help="also write OUT/grades.csv from the merged gradebook")
    merge.set_defaults(run=run)
