"""``python -m autograder grade-one NOTEBOOK --assignment ID``: one notebook, for a hosted grader
(Gradescope's or PrairieLearn's results.json)."""

from __future__ import annotations

import sys
from pathlib import Path

from . import options


def run(args) -> int:
    """``grade-one NOTEBOOK --assignment ID --json results.json``: one notebook, a hosted grader's file."""
    from concurrent.futures import ThreadPoolExecutor

    from ..grading.sandbox.container import Sandbox, extras_for, sandbox_problem
    from ..grading.sandbox.limits import Limits

    if not args.no_sandbox and (problem := sandbox_problem()):
        print(f"error: refusing to grade without a sandbox: {problem}", file=sys.stderr)
        return 2
    from ..grading.names import UnsafeId, check_id

    try:  # a platform's params name the assignment: a folder of --solutions, never a path out of it
        check_id(args.assignment, "assignment id")
    except UnsafeId as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    limits = Limits(
        cell_timeout=args.cell_timeout, total_timeout=args.total_timeout, memory=int(args.memory_limit * 1024**3)
    )
    # The sandbox's fork server imports torch while this process does (the grader's judging needs it);
    # torch._dynamo too when the assignment's solution uses torch.compile (read as text: only a name).
    try:
        solution = sorted((Path(args.solutions) / args.assignment).glob("*.ipynb"))
        source = [solution[0].read_text(encoding="utf-8", errors="replace")] if solution else []
    except OSError:  # grade_single says what is wrong with it
        source = []
    sandbox = Sandbox(limits, sandboxed=not args.no_sandbox, extras=extras_for(source))
    with ThreadPoolExecutor(max_workers=1) as starter:
        warming = starter.submit(sandbox.start)
        try:
            return _grade_one_in(args, limits, sandbox, warming)
        finally:
            warming.exception()  # let the start finish before closing what it started
            sandbox.close()


def _grade_one_in(args, limits, sandbox, warming) -> int:
    import json

    from ..grading.out.feedback import feedback_html
    from ..grading.runs.hosted import grade_single, gradescope, prairielearn
    from ..grading.runs.saved_references import StaleReferences
    from ..grading.sandbox.container import SandboxError

    try:
        references = options.saved_references(args)
        warming.result()
        result, source = grade_single(
            Path(args.notebook),
            args.assignment,
            Path(args.solutions),
            references=references,
            limits=limits,
            sandboxed=not args.no_sandbox,
            student_id=args.student,
            sandbox=sandbox,
        )
    except (KeyError, FileNotFoundError, StaleReferences) as error:
        print(f"error: {error.args[0] if isinstance(error, KeyError) else error}", file=sys.stderr)
        return 2
    except SandboxError as error:
        print(f"error: the sandbox could not start: {error}", file=sys.stderr)
        return 2
    results = (prairielearn if args.format == "prairielearn" else gradescope)(result, source)
    out = Path(args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    if args.feedback:
        Path(args.feedback).write_text(feedback_html(result), encoding="utf-8", errors="replace")
    print(f"{result.assignment_id}: {result.score:g} / {result.max_score:g} ({result.status}); wrote {out}")
    return 0


def add(commands) -> None:
    one = commands.add_parser(
        "grade-one", help="grade one notebook for a hosted grader (Gradescope's or PrairieLearn's results.json)"
    )
    one.add_argument("notebook", help="the submitted .ipynb, or a folder holding it")
    one.add_argument("--assignment", required=True, help="the assignment id (a folder of --solutions)")
    one.add_argument("--json", default="results.json", help="where the results go (default results.json)")
    one.add_argument(
        "--format", choices=["gradescope", "prairielearn"], default="gradescope", help="whose results.json"
    )
    one.add_argument("--feedback", default=None, help="also write the learner's feedback page (HTML) here")
    one.add_argument("--student", default="learner", help="the learner's name on the feedback page")
    options.solutions_option(one)
    one.add_argument("--references", default=None, help="saved solution records (python -m autograder references)")
    one.add_argument("--cell-timeout", type=float, default=60, help="seconds per cell (default 60)")
    one.add_argument("--total-timeout", type=float, default=300, help="seconds per notebook (default 300)")
    one.add_argument("--memory-limit", type=float, default=2, help="GiB of memory a submission may add (default 2)")
    options.no_sandbox_option(one)
    one.set_defaults(run=run)
