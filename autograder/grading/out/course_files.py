"""A graded submission's files in nbgrader's course layout, so nbgrader's own tools take over:

- ``autograded/<student>/<assignment>/<notebook>.ipynb`` and its ``timestamp.txt``: the notebook
  as graded (the instructor's cells with the learner's answers and their outputs), which
  formgrader shows for manual grading. Outputs come from the learner's process: only text and
  PNG/JPEG are kept, so nothing a submission printed runs as HTML or script in formgrader.
- ``feedback/<student>/<assignment>/<notebook>.html`` with ``timestamp.txt`` and
  ``submission_secret.txt`` copied from the submission: what ``nbgrader release_feedback`` reads
  (it names the released page by the hash of the secret and the notebook's name).
"""

from __future__ import annotations

import copy
import shutil
from pathlib import Path

import nbformat

from ..intake.exchange import SECRET, TIMESTAMP, read_small
from .feedback import SAFE_OUTPUTS

__all__ = ["write_autograded", "place_feedback"]


def _copy_small(source_folder: Path | None, dest: Path) -> None:
    for name in (TIMESTAMP, SECRET):
        text = read_small(source_folder, name) if source_folder is not None else None
        if text is not None:
            (dest / name).write_text(text, encoding="utf-8")
        else:
            (dest / name).unlink(missing_ok=True)


def write_autograded(
    course: Path, student: str, assignment: str, notebook_file: str, graded, submission_folder: Path | None
) -> None:
    """Write the graded notebook (``grade_one.Result.notebook``; nothing when None) where
    ``nbgrader autograde`` would, under ``course/autograded/``."""
    if graded is None:
        return
    nb = nbformat.from_dict(copy.deepcopy(graded))  # outputs arrive from the runner as plain dicts
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            if "data" in out:
                out["data"] = {k: v for k, v in out["data"].items() if k in SAFE_OUTPUTS} or {"text/plain": ""}
    folder = course / "autograded" / student / assignment
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, folder / notebook_file)
    _copy_small(submission_folder, folder)


def place_feedback(
    course: Path, student: str, assignment: str, notebook_file: str, page: Path, submission_folder: Path | None
) -> bool:
    """Copy the feedback ``page`` to ``course/feedback/<student>/<assignment>/<notebook>.html``
    with the submission's ``timestamp.txt`` and ``submission_secret.txt`` beside it. Only for a
    submission that came through the exchange (it has both): ``release_feedback`` stops at a
    feedback folder without them. Returns whether the page was placed."""
    if submission_folder is None or any(read_small(submission_folder, n) is None for n in (TIMESTAMP, SECRET)):
        return False
    folder = course / "feedback" / student / assignment
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(page, folder / f"{Path(notebook_file).stem}.html")
    _copy_small(submission_folder, folder)
    return True
