"""Command line: ``python -m autograder grade [SUBMITTED] --out OUT``, ``python -m autograder report``,
``python -m autograder export`` (grades for an LMS), ``python -m autograder extension``,
``python -m autograder release`` and ``python -m autograder explain [FILE]`` (an error text or
pasted traceback; stdin without FILE)."""

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
            )
        except FileNotFoundError as error:
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
    print(
        f"\nWrote {out / 'grades.csv'} (every submission in the gradebook) and feedback pages under {out / 'feedback'}/"
    )
    print(f"Gradebook: {args.db or 'sqlite:///' + str((out / 'gradebook.db').resolve())}")
    from .grading.report import after_grade  # the class report, from the gradebook the run wrote

    print(after_grade(out, args.db, Path(args.solutions)), end="")
    return 0


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
    from .grading.out.exports import export_all
    from .grading.store.gradebook import StoreBusy

    try:
        with _store_of(args) as store:
            written = export_all(store, Path(args.out), Path(args.canvas_roster) if args.canvas_roster else None)
    except (FileNotFoundError, ValueError, StoreBusy) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    for path in written:
        print(f"Wrote {path}")
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
