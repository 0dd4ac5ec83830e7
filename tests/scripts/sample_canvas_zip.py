"""Write a sample Canvas "Download Submissions" zip and its roster, to try `grade --from-zip`.

usage: python tests/scripts/sample_canvas_zip.py ASSIGNMENT STUDENT:CANVAS_ID[:FULL NAME] [...] \
           --zip canvas-ASSIGNMENT.zip --roster roster.csv [--answers correct] [--hours-ago 48]

Each STUDENT hands in the demo class's ``--answers`` notebook (``correct``, ``blank`` or a typical
mistake's name, see ``autograder/grading/mistakes``) for ASSIGNMENT, named as Canvas names a
download (``<lastfirst>_<canvas id>_<submission id>_<file>``), beside a ``notes.txt`` of theirs
(which the grader lists and skips, as it skips any file that is not a notebook). The roster has the
columns ``student_id,canvas_id,name`` (the full name, else the id). Each entry is dated
``--hours-ago`` hours before now, in UTC: the LMS's record of the upload, which ``grade``'s late
policy uses. Run from the course folder.
"""

from __future__ import annotations

import argparse
import csv
import re
import sys
import tempfile
import zipfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the course's autograder package

from autograder.grading.names import counted
from autograder.grading.runs.batch import load_sources
from autograder.grading.runs.demo import build_demo_class


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("assignment")
    parser.add_argument("students", nargs="+", metavar="STUDENT:CANVAS_ID[:FULL NAME]")
    parser.add_argument("--zip", required=True, type=Path)
    parser.add_argument("--roster", required=True, type=Path)
    parser.add_argument("--answers", default="correct", help="a demo-class student: correct, blank or a mistake")
    parser.add_argument("--hours-ago", type=float, default=48.0, help="when they uploaded (UTC), in hours before now")
    args = parser.parse_args(argv)
    course = Path.cwd()
    sources = load_sources(course / "solutions")
    if args.assignment not in sources:
        parser.error(f"no assignment {args.assignment!r} in {course / 'solutions'}: one of {sorted(sources)}")
    pairs = []
    for item in args.students:
        student, _, rest = item.partition(":")
        canvas_id, _, full_name = rest.partition(":")
        if not re.fullmatch(r"[a-z][a-z0-9]*", student) or not canvas_id.isdigit():
            parser.error(f"{item!r}: give STUDENT:CANVAS_ID[:FULL NAME], e.g. grace:103:'Grace Hopper'")
        pairs.append((student, canvas_id, full_name or student))
    name = sources[args.assignment][0]
    uploaded = datetime.now(UTC) - timedelta(hours=args.hours_ago)
    with tempfile.TemporaryDirectory() as tmp:
        build_demo_class(Path(tmp), root=course)
        notebook = Path(tmp) / args.answers / args.assignment / name
        if not notebook.is_file():
            parser.error(f"the demo class has no {args.answers!r} for {args.assignment}")
        with zipfile.ZipFile(args.zip, "w") as zf:
            for i, (_, canvas_id, full_name) in enumerate(pairs):
                last_first = re.sub(
                    r"[^a-z0-9]", "", "".join(reversed(full_name.lower().split()))
                )  # as Canvas names it
                prefix = f"{last_first}_{canvas_id}_{5001 + i}"
                for entry, data in [(f"{prefix}_{name}", notebook.read_bytes()), (f"{prefix}_notes.txt", b"my notes")]:
                    zf.writestr(zipfile.ZipInfo(entry, date_time=uploaded.timetuple()[:6]), data)
    with open(args.roster, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["student_id", "canvas_id", "name"])
        writer.writerows(pairs)
    print(f"Wrote {args.zip} ({counted(len(pairs), 'submission')} of {args.assignment}) and {args.roster}.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
