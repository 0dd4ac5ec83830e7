"""Grade round 11's answers (``round11_cases.CASES``) through the class grader, ``python -m autograder grade``:
each submission is the solution with one answer cell replaced by the case's. Prints, for each case, the
questions that lost points (a wrong answer must lose exactly its own question's) and the feedback of its
question (the gradebook's autograder comment), beside the cause its author stated. Judging the message (names
the cause: yes / partly / no / misleading) is left to a reader.

usage: python tests/grading/heldout/round11_run.py OUT_DIR
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import nbformat
from nbgrader.api import Gradebook

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(REPO))

from round11_cases import CASES  # noqa: E402

from tests.grading.inprocess import solved_answers  # noqa: E402


def main(out: Path) -> int:
    submitted = out / "submitted"
    for case, exercise, answer_cell, _, _, source in CASES:
        notebook = nbformat.read(REPO / "exercises" / exercise / f"{exercise}.ipynb", as_version=4)
        answers = {**solved_answers(exercise), answer_cell: source}
        for cell in notebook.cells:
            gid = cell.metadata.get("nbgrader", {}).get("grade_id")
            if gid in answers:
                cell.source = answers[gid]
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
            notebook = gb.find_submission_notebook(exercise, exercise, case)
            lost = sorted(g.name for g in notebook.grades if (g.score or 0) < (g.max_score or 0))
            comment = next((c.auto_comment for c in notebook.comments if c.name == question), None) or ""
            should = [] if kind == "correct" else [question]
            right = "graded right" if lost == should else f"GRADED WRONG: lost {lost}"
            print(f"## {case} ({kind}): {right}\n   stated: {cause}\n   said: {comment}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
