"""``python -m autograder references --out refs.json``: each solution run once, its records saved."""

from __future__ import annotations

import sys
from pathlib import Path

from . import options


def run(args) -> int:
    """``references --out refs.json``: run each solution once and save its records."""
    from ..grading.runs.batch import SandboxUnavailable
    from ..grading.runs.saved_references import build, write
    from ..grading.sandbox.container import SandboxError, sandbox_problem

    if not args.no_sandbox and (problem := sandbox_problem()):
        print(f"error: refusing to run the solutions without a sandbox: {problem}", file=sys.stderr)
        return 2
    try:
        document = build(Path(args.solutions), sandboxed=not args.no_sandbox, jobs=args.jobs)
    except FileNotFoundError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except (SandboxError, SandboxUnavailable) as error:
        print(f"error: the sandbox could not run the solutions: {error}", file=sys.stderr)
        return 2
    out = Path(args.out)
    write(document, out)
    for assignment, entry in document["assignments"].items():
        print(f"{assignment}: " + (f"not graded: {entry['fails']}" if "fails" in entry else "references saved"))
    print(f"\nWrote {out} (course version {document['course_version']}).")
    return 1 if any("fails" in e for e in document["assignments"].values()) else 0


def add(commands) -> None:
    references = commands.add_parser(
        "references", help="run each assignment's solution once and save its records (refs.json)"
    )
    references.add_argument("--out", default="refs.json", help="the references file to write (default refs.json)")
    options.solutions_option(references)
    references.add_argument("--jobs", type=int, default=None, help="parallel sandboxes (default: CPU cores)")
    options.no_sandbox_option(references)
    references.set_defaults(run=run)
