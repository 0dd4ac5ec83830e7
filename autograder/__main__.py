"""Command line: ``python -m autograder grade [SUBMITTED] --out OUT``, ``python -m autograder export``
(grades for an LMS), ``python -m autograder extension``, ``python -m autograder report``, ``python -m
autograder references``, ``grade-one`` and ``merge`` (past one machine), ``python -m autograder release``
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


def _course_paths(args) -> None:
    """Fill in what ``--course DIR`` implies: its source folder, its gradebook (nbgrader's
    ``CourseDirectory.db_url`` from its ``nbgrader_config.py``, else ``DIR/gradebook.db``) and,
    with no SUBMITTED, what ``nbgrader collect`` left in ``DIR/submitted``."""
    from .grading.store.config import course_config

    course = Path(args.course).resolve()
    directory = course_config(course).get("CourseDirectory", {})
    if args.solutions is None:
        args.solutions = str(course / directory.get("source_directory", "source"))
    if args.db is None:
        args.db = directory.get("db_url") or "sqlite:///" + str(course / "gradebook.db")
    if args.submitted is None and not args.from_zip:
        args.submitted = str(course / directory.get("submitted_directory", "submitted"))


def _duedates(pairs: list[str]) -> dict[str, str]:
    """``{assignment: due date}`` from ``--duedate ID=WHEN`` (WHEN as nbgrader reads it)."""
    from nbgrader.utils import parse_utc

    dues = {}
    for pair in pairs:
        assignment, sep, when = pair.partition("=")
        try:
            parse_utc(when)
        except (ValueError, OverflowError):
            sep = ""
        if not sep or not assignment or not when:
            raise ValueError(
                f"--duedate wants ASSIGNMENT=WHEN (e.g. ex01_graph='2026-01-20 17:00:00 UTC'), not {pair!r}"
            )
        dues[assignment] = when
    return dues


def _unpack(args, scratch: Path) -> bool:
    """Unpack ``--from-zip`` into ``scratch`` (nbgrader's layout) and say what could not be placed."""
    import zipfile

    from .grading.batch import load_sources
    from .grading.intake.lms_zip import read_roster, unpack_lms_zip

    notebooks = {a: name for a, (name, _) in load_sources(Path(args.solutions)).items()}
    if len(args.assignment) > 1 or (args.assignment and args.assignment[0] not in notebooks):
        print(f"error: --from-zip takes at most one --assignment, one of {sorted(notebooks)}", file=sys.stderr)
        return False
    try:
        roster = read_roster(Path(args.roster)) if args.roster else None
        unpacked = unpack_lms_zip(
            Path(args.from_zip), scratch, notebooks, roster, args.assignment[0] if args.assignment else None
        )
    except (OSError, ValueError, zipfile.BadZipFile) as error:
        print(f"error: {error}", file=sys.stderr)
        return False
    print(f"{args.from_zip}: {len(unpacked.placed)} notebooks placed, {len(unpacked.problems)} entries not.")
    for line in unpacked.problems:
        print(f"not placed: {line}")
    for line in unpacked.notes:
        print(f"note: {line}")
    return True


def _grade(args) -> int:
    from .grading.batch import SandboxUnavailable, grade_class
    from .grading.cgroups import memory_cgroup_available
    from .grading.limits import Limits
    from .grading.names import UnsafeId, check_id, terminal
    from .grading.saved_references import StaleReferences
    from .grading.store.gradebook import StoreBusy

    if args.course:
        _course_paths(args)
    args.solutions = args.solutions or str(COURSE_ROOT / "solutions")
    out = Path(args.out)
    try:
        duedates = _duedates(args.duedate)
        for value in args.student:
            check_id(value, "student id")
        for value in [*args.assignment, *duedates]:
            check_id(value, "assignment id")
    except (ValueError, UnsafeId) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="demo-class-") as tmp:
        submitted = Path(args.submitted) if args.submitted else Path(tmp)
        if args.from_zip:
            if args.submitted:
                print("error: give SUBMITTED or --from-zip, not both", file=sys.stderr)
                return 2
            if not _unpack(args, submitted):
                return 2
        elif not args.submitted:
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
        changes, notes = {}, []
        try:
            rows = grade_class(
                submitted,
                out,
                Path(args.solutions),
                jobs=args.jobs,
                limits=limits,
                sandboxed=not args.no_sandbox,
                db_url=args.db,
                course=Path(args.course).resolve() if args.course else None,
                students=args.student or None,
                assignments=args.assignment or None,
                duedates=duedates,
                changes=changes,
                notes=notes,
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
        except StoreBusy as error:
            print(f"error: {error}", file=sys.stderr)
            return 3
    print(_table(rows) if rows else "No submissions found (expected SUBMITTED/<student>/<assignment>/*.ipynb).")
    for note in notes:
        print(f"note: {terminal(note)}")
    for (student, assignment), (old, new) in sorted(changes.items()):
        if old is not None:
            print(f"regraded {terminal(student)}/{terminal(assignment)}: {old:g} → {new:g}")
    if args.shard is not None:
        print(_shard_done(args.shard, out, args.db))
        return 0
    print(
        f"\nWrote {out / 'grades.csv'} (every submission in the gradebook) and feedback pages under {out / 'feedback'}/"
    )
    print(f"Gradebook: {args.db or 'sqlite:///' + str((out / 'gradebook.db').resolve())}")
    from .grading.report import after_grade  # the class report, from the gradebook the run wrote

    print(after_grade(out, args.db, Path(args.solutions)), end="")
    return 0


def _shard_done(shard: tuple[int, int], out: Path, db: str | None) -> str:
    """What a shard run says at its end: where it recorded, and the merge that writes grades.csv."""
    from .grading.batch import default_db_url
    from .grading.shards import is_server, part_url

    k, n = shard
    url = db or default_db_url(out)
    parts = "" if is_server(url) else f"{out}/parts/shard-*-of-{n}.db "
    return (
        f"\nShard {k}/{n}: recorded into {part_url(url, out, shard)}; feedback pages under {out / 'feedback'}/. "
        f"When all {n} shards are done: python -m autograder merge {parts}--db {db or out / 'gradebook.db'} --out {out}"
    )


def _store_of(args):
    """The gradebook that ``export`` and ``extension`` open: ``--db``, else ``--course``'s, else
    ``OUT/gradebook.db`` (where ``grade --out OUT`` put it)."""
    from .grading.batch import default_db_url
    from .grading.store.config import course_config
    from .grading.store.gradebook import Store, sqlite_path

    config = course_config(Path(args.course).resolve()) if args.course else None
    if args.db is None and args.course:
        course = Path(args.course).resolve()
        args.db = config.get("CourseDirectory", {}).get("db_url") or "sqlite:///" + str(course / "gradebook.db")
    url = args.db or default_db_url(Path(args.out))
    path = sqlite_path(url)
    if path is not None and not path.is_file():
        raise FileNotFoundError(f"no gradebook at {path} (grade first, or name it with --db or --course)")
    return Store(url, config)


def _export(args) -> int:
    from .grading.names import terminal
    from .grading.out.exports import export_all, not_in_roster
    from .grading.store.gradebook import StoreBusy

    roster = Path(args.canvas_roster) if args.canvas_roster else None
    try:
        with _store_of(args) as store:
            written = export_all(store, Path(args.out), roster)
            missing = not_in_roster(store, roster) if roster else []
    except (FileNotFoundError, ValueError, StoreBusy) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    for path in written:
        print(f"Wrote {path}")
    for student in missing:
        print(
            f"note: {terminal(student)} is not in {roster.name} (by ID, SIS User ID or SIS Login ID): "
            "canvas.csv has no Canvas id for them, and Canvas's import will not match that row"
        )
    return 0


def _extension(args) -> int:
    from nbgrader.api import MissingEntry

    from .grading.store.gradebook import StoreBusy
    from .grading.store.views import CSV_COLUMNS, grade_rows, write_csv

    try:
        with _store_of(args) as store:
            recorded = store.grant_extension(args.assignment, args.student, args.hours)
            due = store.gb.find_submission(args.assignment, args.student).duedate
            grades = write_csv(Path(args.out) / "grades.csv", CSV_COLUMNS, grade_rows(store))
    except (FileNotFoundError, MissingEntry, StoreBusy) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(
        f"{args.student} has {args.hours:g} h more for {args.assignment} (due {due} UTC): "
        f"score {recorded.old:g} → {recorded.new:g}. Rewrote {grades}; run export again for the exports."
    )
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
    from .grading.sandbox import Sandbox, extras_for, sandbox_problem

    if not args.no_sandbox and (problem := sandbox_problem()):
        print(f"error: refusing to grade without a sandbox: {problem}", file=sys.stderr)
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
    from .grading.store.gradebook import StoreBusy

    try:
        copied = merge_gradebooks(args.parts, args.db, Path(args.out) if args.out else None)
    except FileNotFoundError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except StoreBusy as error:
        print(f"error: {error}", file=sys.stderr)
        return 3
    if args.parts:
        print(f"Merged {copied} submissions from {len(args.parts)} part gradebooks into {args.db}.")
    if args.out:
        print(f"Wrote {Path(args.out) / 'grades.csv'} (every submission in {args.db}).")
    return 0


def _add_merge(commands) -> None:
    merge = commands.add_parser("merge", help="merge shards' part gradebooks into one gradebook (idempotent)")
    merge.add_argument("parts", nargs="*", help="part gradebooks: SQLite files or database URLs (none: only --out)")
    merge.add_argument("--db", required=True, help="the gradebook to merge into: a SQLite file or a database URL")
    merge.add_argument("--out", default=None, help="also write OUT/grades.csv from the merged gradebook")
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
        "--from-zip",
        default=None,
        metavar="ZIP",
        help="grade an LMS bulk download (Canvas's Download Submissions, Moodle's Download all submissions)",
    )
    grade.add_argument(
        "--roster",
        default=None,
        metavar="CSV",
        help="with --from-zip: student_id with canvas_id and/or name columns, or Canvas's gradebook export",
    )
    grade.add_argument(
        "--solutions",
        default=None,
        help="the nbgrader source folder (default: the course's solutions/, or --course's source folder)",
    )
    grade.add_argument(
        "--db",
        default=None,
        help="the nbgrader gradebook, any db_url nbgrader accepts (default: OUT/gradebook.db; with --course, "
        "the course's)",
    )
    grade.add_argument(
        "--course",
        default=None,
        help="an nbgrader course folder: use its gradebook, nbgrader_config.py (late-submission plugin) and "
        "submitted/, and write autograded/ and feedback/ there for formgrader and release_feedback",
    )
    grade.add_argument("--student", action="append", default=[], help="grade only this student (repeatable)")
    grade.add_argument("--assignment", action="append", default=[], help="grade only this assignment (repeatable)")
    grade.add_argument(
        "--duedate",
        action="append",
        default=[],
        metavar="ASSIGNMENT=WHEN",
        help="set an assignment's due date in the gradebook before grading (repeatable; "
        "e.g. ex01_graph='2026-01-20 17:00:00 UTC')",
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
    report = commands.add_parser("report", help="the class report (what the class got wrong) from the gradebook")
    report.add_argument("--db", default=None, help="nbgrader's gradebook URL (default: OUT/gradebook.db)")
    report.add_argument("--out", default="grading-output", help="where report.html and report.csv go")
    report.add_argument("--solutions", default=str(COURSE_ROOT / "solutions"), help="the nbgrader source folder")
    report.set_defaults(run=_report)
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
    export.set_defaults(run=_export)
    extension = commands.add_parser(
        "extension", help="give a student more time for an assignment (nbgrader's SubmittedAssignment.extension)"
    )
    extension.add_argument("assignment")
    extension.add_argument("student")
    extension.add_argument("--hours", type=float, required=True, help="hours added to the due date")
    extension.add_argument("--out", default="grading-output", help="the grade run's OUT (its gradebook.db)")
    extension.add_argument("--db", default=None, help="the gradebook (default: OUT/gradebook.db)")
    extension.add_argument("--course", default=None, help="an nbgrader course folder whose gradebook to use")
    extension.set_defaults(run=_extension)
    _add_references(commands)
    _add_grade_one(commands)
    _add_merge(commands)
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
