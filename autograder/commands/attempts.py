"""``python -m autograder attempts ASSIGNMENT STUDENT --extra N --course DIR``: more attempts for one
learner (the grading service's limits), as ``extension`` gives more time."""

from __future__ import annotations

import sys
from pathlib import Path


def run(args) -> int:
    from ..grading.names import UnsafeId, check_id
    from ..grading.service.queue import Queue

    try:
        check_id(args.assignment, "assignment id")
        check_id(args.student, "student id")
    except UnsafeId as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if args.extra < 0:
        print("error: --extra wants 0 or more attempts", file=sys.stderr)
        return 2
    state = Path(args.state) if args.state else Path(args.course).resolve() / "grading-service"
    queue = Queue(state / "queue.db")
    try:
        queue.grant(args.student, args.assignment, args.extra)
        used = len(queue.used(args.student, args.assignment))
    finally:
        queue.close()
    print(
        f"{args.student} has {args.extra} attempt(s) more than the limit of {args.assignment} "
        f"({used} graded so far); the running service applies it to their next submission."
    )
    return 0


def add(commands) -> None:
    attempts = commands.add_parser("attempts", help="give a learner more attempts than the service's limit")
    attempts.add_argument("assignment")
    attempts.add_argument("student")
    attempts.add_argument("--extra", type=int, required=True, help="attempts beyond the limit (0 removes a grant)")
    attempts.add_argument("--course", default=".", help="the course folder the service serves (default: here)")
    attempts.add_argument("--state", default=None, help="the service's --state (default: COURSE/grading-service)")
    attempts.set_defaults(run=run)
