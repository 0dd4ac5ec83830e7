"""Sample learners for a term tried on one machine: they fetch, answer and submit through nbgrader's
exchange, and fetch their feedback, as learners on a hub do from the Assignments tab.

usage: python tests/scripts/sample_learners.py submit LEARNER ASSIGNMENT [--answers correct]
       python tests/scripts/sample_learners.py feedback LEARNER ASSIGNMENT

Run from the course folder, after ``nbgrader release_assignment ASSIGNMENT``. Each learner works in
``sample-learners/LEARNER/`` (ignored by git), their own home as it were: ``submit`` runs ``nbgrader
fetch_assignment`` there the first time, writes the demo class's ``--answers`` (``correct``,
``blank`` or a typical mistake's name, see ``autograder/grading/mistakes``) into the answer cells
of the fetched notebook and runs ``nbgrader submit --student LEARNER``, at the present time (a
submission after the assignment's due date is late); ``feedback`` runs ``nbgrader fetch_feedback``
after ``nbgrader release_feedback``. The course id and the exchange are the course's own
(``nbgrader_config.py``). Prints each nbgrader command it runs and what came of it; nbgrader's own
log is shown only when a command fails (exit status 1).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the course's autograder package

import nbformat

from autograder.grading.runs.batch import load_sources
from autograder.grading.runs.demo import demo_answers, with_answers
from autograder.grading.store.config import course_config


class Learner:
    """One sample learner's folder and the nbgrader options that reach the course's exchange."""

    def __init__(self, course: Path, name: str):
        self.name, self.home = name, course / "sample-learners" / name
        self.home.mkdir(parents=True, exist_ok=True)
        config = course_config(course)
        self.options = [f"--course={config.CourseDirectory.course_id}"] if "course_id" in config.CourseDirectory else []
        if "root" in config.Exchange:
            self.options.append(f"--Exchange.root={config.Exchange.root}")
        # a learner's own Jupyter data folder: nbgrader submit keeps its cache there, as in their home
        self.env = dict(os.environ, JUPYTER_DATA_DIR=str(self.home / ".jupyter-data"))

    def nbgrader(self, *words: str) -> bool:
        shown = " ".join(w for w in words)
        print(f"{self.name}$ nbgrader {shown}")
        done = subprocess.run(
            ["nbgrader", *words, *self.options], cwd=self.home, env=self.env, capture_output=True, text=True
        )
        if done.returncode:
            print(done.stdout + done.stderr, file=sys.stderr)
        return done.returncode == 0


def submit(course: Path, learner: Learner, assignment: str, answers_of: str) -> bool:
    sources = load_sources(course / "solutions")
    if assignment not in sources:
        print(f"error: no assignment {assignment!r}: one of {', '.join(sorted(sources))}", file=sys.stderr)
        return False
    try:
        answers = demo_answers(assignment, answers_of, root=course)
    except KeyError as error:
        print(f"error: {error.args[0]}", file=sys.stderr)
        return False
    folder = learner.home / assignment
    if not folder.is_dir() and not learner.nbgrader("fetch_assignment", assignment):
        return False
    path = folder / sources[assignment][0]
    nbformat.write(with_answers(nbformat.read(path, as_version=4), answers), path)
    told = "correct answers" if answers_of == "correct" else f"the answers of the demo class's {answers_of}"
    print(f"{learner.name} wrote {told} into {path.relative_to(course)}")
    return learner.nbgrader("submit", assignment, f"--student={learner.name}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=["submit", "feedback"])
    parser.add_argument("learner", help="the learner's id (their login on a hub)")
    parser.add_argument("assignment")
    parser.add_argument(
        "--answers", default="correct", help="with submit: a demo-class student: correct, blank or a mistake's name"
    )
    args = parser.parse_args(argv)
    course = Path.cwd()
    if not (course / "nbgrader_config.py").is_file():
        parser.error("run it from the course folder (where nbgrader_config.py is)")
    learner = Learner(course, args.learner)
    if args.action == "submit":
        done = submit(course, learner, args.assignment, args.answers)
    else:
        done = learner.nbgrader("fetch_feedback", args.assignment, f"--student={args.learner}")
        pages = sorted((learner.home / args.assignment / "feedback").glob("*/*.html"))
        if done and pages:
            print(f"{args.learner}'s feedback: {pages[-1].relative_to(course)}")
    return 0 if done else 1


if __name__ == "__main__":
    sys.exit(main())
