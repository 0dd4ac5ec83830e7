"""Command line: ``python -m autograder grade [SUBMITTED] --out OUT``, ``python -m autograder report``,
``python -m autograder release``
and ``python -m autograder explain [FILE]`` (an error text or pasted traceback; stdin without FILE)."""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from .lessons import COURSE_ROOT  # not from .grading: explain should not wait for nbformat


def _table(rows: list[dict]) -> str:
    from .grading.names import terminal  # a status or id is data: no control character reaches the terminal

    cols = ["student_id", "assignment_id", "score", "max_score", "status", "failed"]
    rows = [{c: terminal(str(r[c])) for c in cols} for r in rows]
    widths = {c: max(len(c), *(len(r[c]) for r in rows)) for c in cols}
    lines = ["  ".join(f"{c:<{widths[c]}}" for c in cols)]
    lines += ["  ".join(f"{r[c]:<{widths[c]}}" for c in cols) for r in rows]
    return "\n".join(line.rstrip() for line in lines)


def _grade(args) -> int:
    from .grading.batch import SandboxUnavailable, grade_class
    from .grading.cgroups import memory_cgroup_available
    from .grading.limits import Limits
    from .grading.saved_references import StaleReferences

    out = Path(args.out)
    with tempfile.TemporaryDirectory(prefix="demo-class-") as tmp:
        submitted = Path(args.submitted) if args.submitted else Path(tmp)
        if not args.submitted:
            from .grading.demo import build_demo_class

            build_demo_class(submitted)
            print(f"No SUBMITTED folder given: grading the demo class ({len(list(submitted.iterdir()))} students).")
        limits = Limits(
            cell_timeout=args.cell_timeout, total_timeout=args.total_timeout, memory=int(args.memory_limit * 1024**3)
        )
        if args.no_sandbox:
            print(
                "WARNING: --no-sandbox: submissions run with your rights, network and files. "
                "Use it only for notebooks you trust; every status in grades.csv says (no sandbox)."
            )
        elif not memory_cgroup_available():
            print(
                f"note: this machine lets the grader make no memory cgroup (that needs root and a writable "
                f"cgroup memory controller): --memory-limit {args.memory_limit:g} GiB bounds each process of a "
                "submission alone, not all of them together."
            )
        try:
            rows = grade_class(
                submitted,
                out,
                Path(args.solutions),
                jobs=args.jobs,
                limits=limits,
                sandboxed=not args.no_sandbox,
                references=_saved_references(args),
                shard=args.shard,
                progress=not args.no_progress,
            )
        except (FileNotFoundError, StaleReferences) as error:
            print(f"error: {error}", file=sys.stderr)
            return 2
        except SandboxUnavailable as error:
            print(f"error: refusing to grade without a sandbox: {error}", file=sys.stderr)
            return 2
    print(_table(rows) if rows else "No submissions found (expected SUBMITTED/<student>/<assignment>/*.ipynb).")
    print(f"\nWrote {out / 'grades.csv'} and feedback pages under {out / 'feedback'}/")
    from .grading.report import after_grade  # the class report, from the gradebook the run wrote

    print(after_grade(out, getattr(args, "db", None), Path(args.solutions)), end="")
    return 0


def _report(args) -> int:
    from .grading.report import report_from_gradebook, terminal_summary

    try:
        summary = report_from_gradebook(args.db, Path(args.out), Path(args.solutions))
    except FileNotFoundError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(terminal_summary(summary, Path(args.out)))
    return 0


def _shard(text: str) -> tuple[int, int]:
    from .grading.shards import parse_shard

    try:
        return parse_shard(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error).removeprefix(f"--shard {text!r}: ")) from None


def _saved_references(args):
    """``--references FILE`` loaded (``saved_references.SavedReferences``), or None without it."""
    from .grading.saved_references import SavedReferences

    return SavedReferences.load(Path(args.references), Path(args.solutions)) if args.references else None


def _references(args) -> int:
    """``references --out refs.json``: run each solution once and save its records."""
    from .grading.batch import SandboxUnavailable
    from .grading.sandbox import SandboxError, sandbox_problem
    from .grading.saved_references import build, write

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


def _no_sandbox_option(parser) -> None:
    parser.add_argument(
        "--no-sandbox", action="store_true", help="run without the bubblewrap sandbox (only notebooks you trust)"
    )


def _solutions_option(parser) -> None:
    parser.add_argument(
        "--solutions",
        default=str(COURSE_ROOT / "solutions"),
        help="the nbgrader source folder (default: the course's solutions/)",
    )


def _add_references(commands) -> None:
    references = commands.add_parser(
        "references", help="run each assignment's solution once and save its records (refs.json)"
    )
    references.add_argument("--out", default="refs.json", help="the references file to write (default refs.json)")
    _solutions_option(references)
    references.add_argument("--jobs", type=int, default=None, help="parallel sandboxes (default: CPU cores)")
    _no_sandbox_option(references)
    references.set_defaults(run=_references)


def _grade_one(args) -> int:
    """``grade-one NOTEBOOK --assignment ID --json results.json``: one notebook, a hosted grader's file."""
    from concurrent.futures import ThreadPoolExecutor

    from .grading.limits import Limits
    from .grading.sandbox import Sandbox, sandbox_problem

    if not args.no_sandbox and (problem := sandbox_problem()):
        print(f"error: refusing to grade without a sandbox: {problem}", file=sys.stderr)
        return 2
    limits = Limits(
        cell_timeout=args.cell_timeout, total_timeout=args.total_timeout, memory=int(args.memory_limit * 1024**3)
    )
    # The sandbox's fork server imports torch while this process does (the grader's judging needs it).
    sandbox = Sandbox(limits, sandboxed=not args.no_sandbox)
    with ThreadPoolExecutor(max_workers=1) as starter:
        warming = starter.submit(sandbox.start)
        try:
            return _grade_one_in(args, limits, sandbox, warming)
        finally:
            warming.exception()  # let the start finish before closing what it started
            sandbox.close()


def _grade_one_in(args, limits, sandbox, warming) -> int:
    import json

    from .grading.feedback import feedback_html
    from .grading.hosted import grade_single, gradescope, prairielearn
    from .grading.sandbox import SandboxError
    from .grading.saved_references import StaleReferences

    try:
        references = _saved_references(args)
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


def _add_grade_one(commands) -> None:
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
    _solutions_option(one)
    one.add_argument("--references", default=None, help="saved solution records (python -m autograder references)")
    one.add_argument("--cell-timeout", type=float, default=60, help="seconds per cell (default 60)")
    one.add_argument("--total-timeout", type=float, default=300, help="seconds per notebook (default 300)")
    one.add_argument("--memory-limit", type=float, default=2, help="GiB of memory a submission may add (default 2)")
    _no_sandbox_option(one)
    one.set_defaults(run=_grade_one)


def _merge(args) -> int:
    """``merge PARTS... --db TARGET``: shards' part gradebooks into one (idempotent)."""
    from .grading.merge import merge_gradebooks

    try:
        copied = merge_gradebooks(args.parts, args.db)
    except FileNotFoundError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"Merged {copied} submissions from {len(args.parts)} part gradebooks into {args.db}.")
    return 0


def _add_merge(commands) -> None:
    merge = commands.add_parser("merge", help="merge shards' part gradebooks into one gradebook (idempotent)")
    merge.add_argument("parts", nargs="+", help="part gradebooks: SQLite files or database URLs")
    merge.add_argument("--db", required=True, help="the gradebook to merge into: a SQLite file or a database URL")
    merge.set_defaults(run=_merge)


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


def _explain(args) -> int:
    from .explain import explain

    if args.file in (None, "-"):
        text = sys.stdin.read()
    else:
        try:
            text = Path(args.file).read_text(encoding="utf-8", errors="replace")
        except OSError as error:
            print(f"error: {error}", file=sys.stderr)
            return 2
    print(explain(text))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    grade = commands.add_parser("grade", help="grade a class (with no folder: the demo class)")
    grade.add_argument("submitted", nargs="?", help="SUBMITTED/<student_id>/<assignment_id>/<notebook>.ipynb")
    grade.add_argument("--out", default="grading-output", help="where grades.csv and feedback/ go")
    grade.add_argument(
        "--solutions",
        default=str(COURSE_ROOT / "solutions"),
        help="the nbgrader source folder (default: the course's solutions/)",
    )
    grade.add_argument("--jobs", type=int, default=None, help="parallel sandboxes (default: CPU cores)")
    grade.add_argument("--cell-timeout", type=float, default=60, help="seconds per cell (default 60)")
    grade.add_argument("--total-timeout", type=float, default=300, help="seconds per notebook (default 300)")
    grade.add_argument("--memory-limit", type=float, default=2, help="GiB of memory a submission may add (default 2)")
    grade.add_argument(
        "--no-sandbox",
        action="store_true",
        help="run submissions without the bubblewrap sandbox (only for notebooks you trust)",
    )
    grade.add_argument(
        "--references", default=None, help="saved solution records (python -m autograder references) instead of runs"
    )
    grade.add_argument(
        "--shard", type=_shard, default=None, help="grade only shard K of N (K/N, from 0) of the class, for job arrays"
    )
    grade.add_argument("--no-progress", action="store_true", help="no progress bars (batch jobs' logs)")
    grade.set_defaults(run=_grade)
    _add_references(commands)
    _add_grade_one(commands)
    _add_merge(commands)
    report = commands.add_parser("report", help="the class report (what the class got wrong) from the gradebook")
    report.add_argument("--db", default=None, help="nbgrader's gradebook URL (default: OUT/gradebook.db)")
    report.add_argument("--out", default="grading-output", help="where report.html and report.csv go")
    report.add_argument("--solutions", default=str(COURSE_ROOT / "solutions"), help="the nbgrader source folder")
    report.set_defaults(run=_report)
    release = commands.add_parser("release", help="generate exercises/ from solutions/ with nbgrader")
    release.add_argument("--check", action="store_true", help="only report stale release notebooks")
    release.set_defaults(run=_release)
    explain = commands.add_parser(
        "explain", help="explain an autograd error or warning (a pasted traceback) read from FILE or stdin"
    )
    explain.add_argument("file", nargs="?", help="a file holding the error text (default: stdin)")
    explain.set_defaults(run=_explain)
    args = parser.parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
