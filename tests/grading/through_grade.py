"""Grade answers through the real entry point, ``python -m autograder grade`` (the class grader, its sandbox and its
gradebook), every other answer cell the solution's: a test aid shared by the corpus tests."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import nbformat
from nbgrader.api import Gradebook

from tests.grading import inprocess


def graded(tmp_path: Path, answers: dict[tuple[str, str], dict[str, str]]) -> dict[tuple[str, str], tuple[dict, dict]]:
    """``{(exercise, student): answers}`` graded in one run: ``{(exercise, student): (scores, comments)}``, with
    ``scores`` ``{grade_id: (score, max_score)}`` and ``comments`` ``{grade_id: autograder comment}``."""
    submitted = tmp_path / "submitted"
    for (exercise, student), given in answers.items():
        notebook = nbformat.read(inprocess.ROOT / "exercises" / exercise / f"{exercise}.ipynb", as_version=4)
        cells = {**inprocess.solved_answers(exercise), **given}
        for cell in notebook.cells:
            answer = cells.get(cell.metadata.get("nbgrader", {}).get("grade_id"))
            if answer is not None:
                cell.source = answer
        path = submitted / student / exercise / f"{exercise}.ipynb"
        path.parent.mkdir(parents=True)
        nbformat.write(notebook, path)
    out = tmp_path / "graded"
    done = subprocess.run(
        [sys.executable, "-m", "autograder", "grade", str(submitted), "--out", str(out), "--no-progress"],
        capture_output=True,
        text=True,
        cwd=inprocess.ROOT,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    found = {}
    with Gradebook(f"sqlite:///{out / 'gradebook.db'}") as gb:
        for exercise, student in answers:
            notebook = gb.find_submission_notebook(exercise, exercise, student)
            scores = {g.name: (g.score, g.max_score) for g in notebook.grades}
            found[exercise, student] = (scores, {c.name: c.auto_comment or "" for c in notebook.comments})
    return found
