"""A graded submission's files in nbgrader's course layout, so nbgrader's own tools take over:

- ``autograded/<student>/<assignment>/<notebook>.ipynb`` and its ``timestamp.txt``: the notebook
  as graded (the instructor's cells with the learner's answers and their outputs, each test cell
  ending with its verdict), which formgrader shows for manual grading. Outputs come from the
  learner's process: only text and PNG/JPEG are kept, so nothing a submission printed runs as
  HTML or script in formgrader.
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
from ..judge.grade_one import Result
from .feedback import add_verdicts, keep_safe_outputs
from .redact import hidden_lines

__all__ = ["write_autograded", "place_feedback"]


def _copy_small(source_folder: Path | None, dest: Path) -> None:
    for name in (TIMESTAMP, SECRET):
        text = read_small(source_folder, name) if source_folder is not None else None
        if text is not None:
            (dest / name).write_text(text, encoding="utf-8")
        else:
            (dest / name).unlink(missing_ok=True)


def write_autograded(course: Path, result: Result, notebook_file: str, submission_folder: Path | None) -> None:
    """Write ``result``'s graded notebook (nothing when it has none) where ``nbgrader autograde``
    would, under ``course/autograded/``, each test cell ending with its verdict (``Graded: 0 / 3.``
    and the message with its cause, scrubbed of hidden-test lines as on the feedback page): what
    formgrader shows of a test cell is its outputs, and the learner's own "checked when graded"
    lines there would read like a pass."""
    if result.notebook is None:
        return
    nb = nbformat.from_dict(copy.deepcopy(result.notebook))  # outputs arrive from the runner as plain dicts
    keep_safe_outputs(nb)
    add_verdicts(nb, result, hidden_lines(nb))
    folder = course / "autograded" / result.student_id / result.assignment_id
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
