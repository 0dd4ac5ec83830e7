"""Where a learner stands across the course's exercises: the record that ``python -m autograder
progress`` leaves in the learner's folder, and the table the start page shows from it.

``python -m autograder progress`` runs each exercise of ``my-work/exercises/`` top to bottom in a
fresh process and writes what each question got into ``my-work/.progress.json``::

    {"format": "autograder progress 1", "checked": "2026-12-07 10:02 UTC",
     "tests": "hidden" | "visible",
     "exercises": [{"exercise": "ex01_graph", "title": "Exercise 1: ...", "sha256": "<of the notebook run>",
                    "status": "graded" | why the run stopped early | "no notebook",
                    "questions": [{"number": 1, "points": 2.0, "score": 2.0,
                                   "result": "passed" | "failed" | "not answered yet" | "checked when graded",
                                   "cause": "first line of why not"}, ...]}, ...]}

:func:`progress` (``check.progress()``, a cell of the start page) reads it, runs nothing, and shows
one row per question: its points, passed or the first line of the cause, not answered yet; an
exercise whose notebook changed after it was checked says "changed since checked"; an exercise
never checked shows its questions as "not checked yet". The questions and points come from the
exercises themselves (nbgrader's metadata), so the table is whole before the first check.
"""

from __future__ import annotations

import hashlib
import html
import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..lessons import COURSE_ROOT, LEARNER_FOLDER, learner_root
from .summary import NOT_ANSWERED_YET, points_said, questions, title

__all__ = [
    "RECORD",
    "FORMAT",
    "PASSED",
    "FAILED",
    "NOT_ANSWERED",
    "ONLY_WHEN_GRADED",
    "NOT_CHECKED",
    "CHANGED",
    "QuestionStanding",
    "ExerciseStanding",
    "Standing",
    "digest",
    "plain_title",
    "exercise_paths",
    "write_record",
    "read_record",
    "standing",
    "progress",
]

RECORD = ".progress.json"
FORMAT = "autograder progress 1"
PASSED, FAILED, NOT_ANSWERED, ONLY_WHEN_GRADED = "passed", "failed", NOT_ANSWERED_YET, "checked when graded"
NOT_CHECKED = "not checked yet"
CHANGED = "changed since checked"
HOW = "python -m autograder progress"
TESTS = {
    "hidden": "with the hidden tests (solutions/ is in this course folder)",
    "visible": "with the checks you can see (graders also run hidden tests)",
}


def digest(path: Path) -> str:
    """The SHA-256 (hex) of the file at ``path``'s bytes; "" when it cannot be read."""
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return ""


@dataclass
class QuestionStanding:
    """One question: its ``number``, ``points`` and ``score`` (floats), ``result`` (one of
    PASSED, FAILED, NOT_ANSWERED, ONLY_WHEN_GRADED, NOT_CHECKED) and ``cause``: the first line of
    why it did not pass ("" when it passed)."""

    number: int
    points: float
    score: float = 0.0
    result: str = NOT_CHECKED
    cause: str = ""

    def said(self) -> str:
        """The result as the table says it: ``passed``, ``failed: <cause>``, ``not answered yet``..."""
        return f"{FAILED}: {self.cause}" if self.result == FAILED and self.cause else self.result


@dataclass
class ExerciseStanding:
    """One exercise as last checked: its id, title, the SHA-256 of the notebook that ran, its
    status (``graded``, or why its run stopped early) and its questions. ``changed`` is set when
    the table is made: the notebook is no longer the one that was checked."""

    exercise: str
    title: str
    sha256: str = ""
    status: str = NOT_CHECKED
    questions: list[QuestionStanding] = field(default_factory=list)
    changed: bool = False

    @property
    def score(self) -> float:
        return sum(q.score for q in self.questions)

    def said(self) -> str:
        """The exercise's line: ``5 of 8 points``, and whether it changed since or its run stopped;
        ``3 questions, 8 points: not checked yet`` for one never checked."""
        if self.status == NOT_CHECKED:
            asked = f"{len(self.questions)} question{'' if len(self.questions) == 1 else 's'}"
            return f"{asked}, {points_said(self.points)}: {NOT_CHECKED}"
        state = f" ({CHANGED})" if self.changed else ""
        stopped = f" ({self.status})" if self.status != "graded" else ""  # no notebook, a time limit, ...
        return f"{self.score:g} of {points_said(self.points)}{state}{stopped}"

    @property
    def points(self) -> float:
        return sum(q.points for q in self.questions)


@dataclass
class Standing:
    """The whole table: every exercise, when and with which tests it was last checked ("" never)."""

    exercises: list[ExerciseStanding]
    checked: str = ""
    tests: str = ""
    note: str = ""

    def text(self) -> str:
        """The table as plain text (the command prints it; it is the output's ``text/plain``)."""
        lines = [self.heading()]
        for ex in self.exercises:
            lines.append(f"{ex.title}: {ex.said()}")
            if ex.status != NOT_CHECKED:
                lines += [f"  Question {q.number} ({points_said(q.points)}): {q.said()}" for q in ex.questions]
        return "\n".join([*lines, self.footer()])

    def heading(self) -> str:
        total = sum(ex.points for ex in self.exercises)
        if not self.checked:
            return f"Your exercises, not checked yet: {len(self.exercises)} exercises, {total:g} points."
        passed = sum(q.result == PASSED for ex in self.exercises for q in ex.questions)
        asked = sum(len(ex.questions) for ex in self.exercises)
        score = sum(ex.score for ex in self.exercises)
        return (
            f"Your exercises as checked {self.checked}, {TESTS.get(self.tests, self.tests)}: "
            f"{passed} of {asked} questions pass ({score:g} of {points_said(total)})."
        )

    def footer(self) -> str:
        again = (
            f"Check again: run `{HOW}` in a JupyterLab terminal (File, New, Terminal), or "
            "`.venv/bin/python -m autograder progress` in the course folder, or check.progress(run=True) here."
        )
        return f"{self.note} {again}".strip()

    def html(self) -> str:
        """The table as HTML: a caption, one group of rows per exercise, a header cell per row."""
        esc = html.escape
        rows = []
        for ex in self.exercises:
            head = esc(f"{ex.title}: {ex.said()}")
            body = [f'<tr><th scope="rowgroup" colspan="3" style="text-align: left">{head}</th></tr>']
            asked = ex.questions if ex.status != NOT_CHECKED else []
            body += [
                f'<tr><th scope="row" style="text-align: left">Question {q.number}</th>'
                f'<td style="text-align: right">{q.score:g} of {q.points:g}</td>'
                f'<td style="text-align: left">{esc(q.said())}</td></tr>'
                for q in asked
            ]
            rows.append(f"<tbody>{''.join(body)}</tbody>")
        header = (
            '<thead><tr><th scope="col" style="text-align: left">Question</th>'
            '<th scope="col" style="text-align: right">Points</th>'
            '<th scope="col" style="text-align: left">Result</th></tr></thead>'
        )
        caption = f'<caption style="text-align: left">{esc(self.heading())}</caption>'
        return f'<table class="course-progress">{caption}{header}{"".join(rows)}</table><p>{esc(self.footer())}</p>'

    def _repr_mimebundle_(self, include=None, exclude=None):
        return {"text/html": self.html(), "text/plain": self.text()}

    def __repr__(self) -> str:
        return self.text()


def plain_title(path: Path) -> str:
    """The exercise's heading as plain text (its markdown's backticks left out)."""
    return title(path).replace("`", "")


def exercise_paths(root: Path) -> dict[str, Path]:
    """``{exercise id: notebook}`` for each ``root/exercises/<id>/<id>.ipynb`` (the release's name;
    ``.newer`` copies left out), in course order."""
    found = {}
    for folder in sorted(p for p in (Path(root) / "exercises").glob("*") if p.is_dir()):
        notebook = folder / f"{folder.name}.ipynb"
        if notebook.is_file():
            found[folder.name] = notebook
    return found


def write_record(mine: Path, exercises: list[ExerciseStanding], checked: str, tests: str) -> Path:
    """Write the record (module docstring) into the learner's folder ``mine``, atomically; its path."""
    document = {
        "format": FORMAT,
        "checked": checked,
        "tests": tests,
        "exercises": [{k: v for k, v in asdict(ex).items() if k != "changed"} for ex in exercises],
    }
    path = Path(mine) / RECORD
    partial = path.with_name(f".{path.name}.partial")
    partial.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    os.replace(partial, path)
    return path


def read_record(mine: Path) -> dict | None:
    """The record in ``mine`` as written by :func:`write_record`, or None (none, unreadable, another format)."""
    try:
        document = json.loads((Path(mine) / RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return document if isinstance(document, dict) and document.get("format") == FORMAT else None


def _recorded(entry: dict) -> ExerciseStanding | None:
    try:
        return ExerciseStanding(
            str(entry["exercise"]),
            str(entry["title"]),
            str(entry.get("sha256", "")),
            str(entry.get("status", "")),
            [
                QuestionStanding(
                    int(q["number"]), float(q["points"]), float(q["score"]), str(q["result"]), str(q["cause"])
                )
                for q in entry["questions"]
            ],
        )
    except (KeyError, TypeError, ValueError):
        return None


def standing(root: Path, recorded: bool = True) -> Standing:
    """The table for the course folder or learner's folder ``root``: every exercise of
    ``root/exercises`` with its questions, as the record in ``root`` last checked them (with
    ``recorded`` False, or no record, none checked); an exercise whose notebook's SHA-256 is not the
    one checked is marked changed. Runs nothing."""
    record = (read_record(root) if recorded else None) or {}
    recorded = {}
    for entry in record.get("exercises", []) if isinstance(record.get("exercises"), list) else []:
        found = _recorded(entry) if isinstance(entry, dict) else None
        if found is not None:
            recorded[found.exercise] = found
    exercises, paths = [], exercise_paths(root)
    for exercise in sorted(paths.keys() | recorded.keys()):  # one the learner deleted since: as recorded
        seen, path = recorded.get(exercise), paths.get(exercise)
        if seen is None:
            asked = [QuestionStanding(q.number, q.points) for q in questions(path)]
            exercises.append(ExerciseStanding(exercise, plain_title(path), questions=asked))
            continue
        seen.changed = seen.sha256 != (digest(path) if path else "")
        exercises.append(seen)
    return Standing(exercises, str(record.get("checked", "")), str(record.get("tests", "")))


def progress(run: bool = False) -> Standing:
    """The start page's table (see the module docstring) of the learner's folder, from its record.

    In the learner's copy (``my-work/``, where ``./course lab`` opens the start page) it shows
    the learner's exercises; in the course's own copy it shows the released exercises unchecked
    and says where the learner's table is. ``run=True`` checks the exercises again first
    (``python -m autograder progress``, a minute or so) and then shows the new table.
    """
    root = learner_root(Path.cwd())
    if run:
        import subprocess
        import sys

        command = [sys.executable, "-m", "autograder", "progress", "--course", str(COURSE_ROOT), "--quiet"]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode:
            print(done.stdout + done.stderr)
    found = standing(root, recorded=root == LEARNER_FOLDER)
    if root != LEARNER_FOLDER:
        found.note = (
            "This is the course's own copy of the start page: in yours (my-work/notebooks/00_start.ipynb, "
            "which ./course lab opens) this table shows your exercises."
        )
    return found
