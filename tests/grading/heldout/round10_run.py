"""Grade round 10's held-out answers (``round10_cases.CASES``) through the class grader and print, for
each, the question's score and the message the learner's feedback gives (the gradebook's autograder
comment), beside the cause its author stated. Judging the message (names the cause: yes / partly /
no / misleading) is left to a reader.

usage: python tests/grading/heldout/round10_run.py OUT_DIR
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import nbformat
from nbgrader.api import Gradebook

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from round10_cases import CASES  # noqa: E402


def main(out: Path) -> int:
    submitted = out / "submitted"
    for case, exercise, answer_cell, _, _, source in CASES:
        notebook = nbformat.read(REPO / "exercises" / exercise / f"{exercise}.ipynb", as_version=4)
        cell = next(c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade_id") == answer_cell)
        cell.source = source
        path = submitted / case / exercise / f"{exercise}.ipynb"
        path.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(notebook, path)
    subprocess.run(
        [sys.executable, "-m", "autograder", "grade", str(submitted), "--out", str(out / "graded"), "--no-progress"],
        stdout=subprocess.DEVNULL,
        check=True,
        cwd=REPO,
    )
    with Gradebook(f"sqlite:///{out / 'graded' / 'gradebook.db'}") as gb:
        for case, exercise, answer_cell, kind, cause, _ in CASES:
            question = answer_cell.replace("_answer", "_check")
            grade = gb.find_grade(question, exercise, exercise, case)
            notebook = gb.find_submission_notebook(exercise, exercise, case)
            comment = next((c.auto_comment for c in notebook.comments if c.name == question), None) or ""
            print(f"## {case} ({kind}): {grade.score:g}/{grade.max_score:g}\n   stated: {cause}\n   said: {comment}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
