"""A small class for the tests of saved references, shards, merge and hosted graders: the tiny
source of ``conftest`` as ``solutions/ex01`` and ``solutions/ex02`` (same cells, two assignments),
and students whose answers are right, wrong or missing."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat

from .conftest import submission_of

RIGHT, WRONG = "def f():\n    return 1", "def f():\n    return 2"


def write_class(source, root: Path, students: dict[str, dict[str, str | None]]) -> tuple[Path, Path]:
    """``root/solutions/<a>/<a>.ipynb`` for each assignment named in ``students`` and
    ``root/submitted/<student>/<a>/<a>.ipynb`` with the given answer (None: an empty folder).
    Returns ``(solutions, submitted)``."""
    solutions, submitted = root / "solutions", root / "submitted"
    for student, answers in students.items():
        for assignment, answer in answers.items():
            if not (solutions / assignment).is_dir():
                (solutions / assignment).mkdir(parents=True)
                nbformat.write(source, solutions / assignment / f"{assignment}.ipynb")
            folder = submitted / student / assignment
            folder.mkdir(parents=True)
            if answer is not None:
                nbformat.write(submission_of(source, answer), folder / f"{assignment}.ipynb")
    return solutions, submitted


SMALL_CLASS = {
    "ann": {"ex01": RIGHT, "ex02": RIGHT},
    "bob": {"ex01": WRONG, "ex02": RIGHT},
    "cy": {"ex01": RIGHT, "ex02": None},
}


# The summary cell a feedback page starts with gets a random nbformat cell id each time it is made
# (feedback.feedback_notebook); two runs' pages are compared without it.
_CELL_ID = re.compile(r' id="cell-id=[0-9a-f-]+"')


def outputs(out: Path) -> dict[str, str]:
    """``{path under out: text}`` of grades.csv and every feedback page, cell ids left out."""
    files = sorted([*(out / "feedback").rglob("*.html"), *out.glob("grades.csv")])
    return {str(p.relative_to(out)): _CELL_ID.sub("", p.read_text(encoding="utf-8")) for p in files}
