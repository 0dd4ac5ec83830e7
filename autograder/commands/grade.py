"""``python -m autograder grade [SUBMITTED] --out OUT``: grade a class (with no SUBMITTED, the demo class)."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from ..lessons import COURSE_ROOT
from . import options


def _table(rows: list[dict]) -> str:
    from ..grading.names import terminal  # a status or id is data: no control character reaches the terminal

    cols = ["student_id", "assignment_id", "score", "max_score", "late", "status", "failed"]
    rows = [{c: terminal(str(r[c])) for c in cols} for r in rows]
    widths = {c: max(len(c), *(len(r[c]) for r in rows)) for c in cols}
    lines = ["  ".join(f"{c:<{widths[c]}}" for c in cols)]
    lines += ["  ".join(f"{r[c]:<{widths[c]}}" for c in cols) for r in rows]
    return "\n".join(line.rstrip() for line in lines)


def _course_paths(args) -> None:
    """Fill in what ``--course DIR`` implies (``store.config.course_paths``): its source folder, its
    gradebook, its ``submitted`` folder (``args.course_submitted``: where a zip's notebooks are kept)
    and, with no SUBMITTED, what ``nbgrader collect`` left there."""
    from ..grading.store.config import course_paths

    source, db_url, args.course_submitted = course_paths(Path(args.course))
    if args.solutions is None:
        args.solutions = str(source)
    if args.db is None:
        args.db = db_url
    if args.submitted is None and not args.from_zip:
        args.submitted = str(args.course_submitted)


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


def _unpack(args, scratch: Path):
    """Unpack ``--from-zip`` into ``scratch`` (nbgrader's layout) and say what could not be placed.
    Returns ``(Unpacked, Roster or None)``, or None after an error message."""
    import zipfile

    from ..grading.intake.lms_zip import read_roster, unpack_lms_zip
    from ..grading.names import counted
    from ..grading.runs.batch import load_sources

    notebooks = {a: name for a, (name, _) in load_sources(Path(args.solutions)).items()}
    if len(args.assignment) > 1 or (args.assignment and args.assignment[0] not in notebooks):
        print(f"error: --from-zip takes at most one --assignment, one of {sorted(notebooks)}", file=sys.stderr)
        return None
    if not args.assignment and len(notebooks) > 1:  # a learner names their own file: it picks nothing
        print(
            "error: --from-zip needs --assignment ID, the LMS assignment the download is of (a learner's file name "
            f"does not decide it), one of {sorted(notebooks)}",
            file=sys.stderr,
        )
        return None
    try:
        roster = read_roster(Path(args.roster)) if args.roster else None
        unpacked = unpack_lms_zip(
            Path(args.from_zip), scratch, notebooks, roster, args.assignment[0] if args.assignment else None
        )
    except (OSError, ValueError, zipfile.BadZipFile) as error:
        print(f"error: {error}", file=sys.stderr)
        return None
    placed, left = counted(len(unpacked.placed), "notebook"), counted(len(unpacked.problems), "entry", "entries")
    print(f"{args.from_zip}: {placed} placed, {left} not.")
    for line in roster.problems if roster else []:
        print(f"roster: {line}")
    for line in unpacked.problems:
        print(f"not placed: {line}")
    for line in unpacked.notes:
        print(f"note: {line}")
    return unpacked, roster


def run(args) -> int:
    from ..grading.names import UnsafeId, check_id, terminal
    from ..grading.runs.batch import SandboxUnavailable, grade_class
    from ..grading.runs.saved_references import StaleReferences
    from ..grading.runs.selection import NothingToGrade
    from ..grading.sandbox.cgroups import memory_cgroup_available
    from ..grading.sandbox.limits import Limits
    from ..grading.store.gradebook import StoreBusy

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
    if args.course and not args.from_zip and not Path(args.submitted).is_dir():
        print(
            f"nothing to grade: nothing collected yet ({args.submitted}/ does not exist){_how_learners_submit(args)}",
            file=sys.stderr,
        )
        return 1
    from_zip = None
    with tempfile.TemporaryDirectory(prefix="demo-class-") as tmp:
        submitted = Path(args.submitted) if args.submitted else Path(tmp)
        if args.from_zip:
            if args.submitted:
                print("error: give SUBMITTED or --from-zip, not both", file=sys.stderr)
                return 2
            from_zip = _unpack(args, submitted)
            if from_zip is None:
                return 2
            if args.course:  # where nbgrader's collect would have put them: formgrader counts them there
                from ..grading.intake.collected import keep_in_course

                zipped = from_zip[0]
                kept = keep_in_course(submitted, args.course_submitted, zipped.placed, zipped.times, zipped.by_name)
                for line in kept:
                    print(f"note: {line}")
        elif not args.submitted:
            from ..grading.runs.demo import build_demo_class

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
        replaced = _other_gradebooks_output(out, args.db)
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
                references=options.saved_references(args),
                shard=args.shard,
                progress=not args.no_progress,
            )
        except NothingToGrade as error:
            print(f"{error}{_how_learners_submit(args)}", file=sys.stderr)
            return 1
        except (FileNotFoundError, StaleReferences) as error:
            print(f"error: {error}", file=sys.stderr)
            return 2
        except SandboxUnavailable as error:
            print(f"error: refusing to grade without a sandbox: {error}", file=sys.stderr)
            return 2
        except StoreBusy as error:
            print(f"error: {error}", file=sys.stderr)
            return 3
    _own_output(out, args.db)
    if from_zip is not None and from_zip[1] is not None and rows:
        _name_from_roster(args, out, from_zip)
    print(_table(rows) if rows else "This shard holds none of the class's submissions.")
    for note in notes:
        print(f"note: {terminal(note)}")
    if replaced:
        print(_replaced_note(out, replaced))
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
    from ..grading.out.report import after_grade  # the class report, from the gradebook the run wrote

    print(after_grade(out, args.db, Path(args.solutions)), end="")
    return 0


def _how_learners_submit(args) -> str:
    """The lines that follow "nothing to grade" for a course folder: how its submissions arrive."""
    if not args.course or args.from_zip:
        return ""
    return (
        "\nLearners hand in with `nbgrader submit ASSIGNMENT` (or the Submit button of JupyterLab's Assignments "
        "tab); then `nbgrader collect ASSIGNMENT` puts their work in submitted/. For an LMS download: "
        "grade --course . --from-zip ZIP --roster CSV."
    )


def _name_from_roster(args, out: Path, from_zip) -> None:
    """Give the learners graded from the zip their roster names in the gradebook (formgrader and
    the exports show them), where it has none yet."""
    from ..grading.names import counted, terminal
    from ..grading.runs.shards import part_url
    from ..grading.store import default_db_url
    from ..grading.store.student_names import name_students

    unpacked, roster = from_zip
    url = part_url(args.db or default_db_url(out), out, args.shard)
    names = {s: roster.names[s] for s, _ in unpacked.placed if s in roster.names}
    named = name_students(url, names)
    if named:
        print(f"Named {counted(len(named), 'learner')} in the gradebook from {terminal(args.roster)}.")


OWNER = ".gradebook-url"  # in OUT: the gradebook whose grades.csv, report and pages OUT holds


def _other_gradebooks_output(out: Path, db: str | None) -> str | None:
    """The gradebook whose results ``out`` holds (its ``OWNER`` file), when that is not the one this
    run writes (``db``, else OUT/gradebook.db): ``grade --course .`` and the demo class both default
    to ``grading-output/``. None otherwise. Reads only: :func:`_own_output` records the new owner
    once the run has written its results."""
    from ..grading.store import default_db_url

    marker = out / OWNER
    try:
        before = marker.read_text(encoding="utf-8").strip() if marker.is_file() else None
    except (OSError, UnicodeDecodeError):
        before = None
    return before if before and before != (db or default_db_url(out)) else None


def _replaced_note(out: Path, replaced: str) -> str:
    """The note of a run whose OUT held the results of the gradebook ``replaced`` (a URL)."""
    from ..grading.names import terminal
    from ..grading.store import default_db_url

    # OUT/gradebook.db is what a run without --course or --db writes, the demo class's included
    whose = " (a run without --course or --db, such as the demo class)" if replaced == default_db_url(out) else ""
    return (
        f"note: {out}/ held the results of another gradebook, {terminal(replaced)}{whose}: "
        "its grades.csv, class report and feedback pages are now this run's. Give --out DIR to keep them apart."
    )


def _own_output(out: Path, db: str | None) -> None:
    """Record in ``out`` which gradebook its grades.csv, report and pages are now of."""
    from ..grading.store import default_db_url

    if out.is_dir():
        (out / OWNER).write_text((db or default_db_url(out)) + "\n", encoding="utf-8")


def _shard_done(shard: tuple[int, int], out: Path, db: str | None) -> str:
    """What a shard run says at its end: where it recorded, and the merge that writes grades.csv."""
    from ..grading.runs.batch import default_db_url
    from ..grading.runs.shards import is_server, part_url

    k, n = shard
    url = db or default_db_url(out)
    parts = "" if is_server(url) else f"{out}/parts/shard-*-of-{n}.db "
    return (
        f"\nShard {k}/{n}: recorded into {part_url(url, out, shard)}; feedback pages under {out / 'feedback'}/. "
        f"When all {n} shards are done: python -m autograder merge {parts}--db {db or out / 'gradebook.db'} --out {out}"
    )


def add(commands) -> None:
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
        help="with --from-zip: student_id with canvas_id, moodle_id and/or name columns, or Canvas's gradebook "
        "export, or Moodle's grading worksheet (ids decide; a name or id of two people is refused)",
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
        "--shard",
        type=options.shard,
        default=None,
        help="grade only shard K of N (K/N, from 0) of the class, for job arrays",
    )
    grade.add_argument("--no-progress", action="store_true", help="no progress bars (batch jobs' logs)")
    grade.set_defaults(run=run)
