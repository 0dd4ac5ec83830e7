"""Grade a class: every ``SUBMITTED/<student_id>/<assignment_id>/<notebook>.ipynb`` in parallel.

Writes ``OUT/grades.csv`` and ``OUT/feedback/<student_id>/<assignment_id>.html``. Submissions are
only read; each runs in its own fresh kernel in a temporary folder.
"""
from __future__ import annotations

import csv
import os
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path

import nbformat
from tqdm import tqdm

from ..lessons import COURSE_ROOT
from .runner import warm_up

__all__ = ["Submission", "find_submissions", "load_sources", "grade_class", "COURSE_ROOT"]

CSV_COLUMNS = ["student_id", "assignment_id", "score", "max_score", "status", "failed"]


@dataclass(frozen=True)
class Submission:
    """Where one student's notebook for one assignment is (``path`` None: none found)."""

    student_id: str
    assignment_id: str
    path: Path | None


def load_sources(solutions: Path) -> dict[str, tuple[str, nbformat.NotebookNode]]:
    """``{assignment_id: (notebook file name, source notebook)}`` for each ``solutions/<id>/``."""
    sources = {}
    for folder in sorted(p for p in solutions.iterdir() if p.is_dir()):
        notebooks = sorted(folder.glob("*.ipynb"))
        if notebooks:
            sources[folder.name] = (notebooks[0].name, nbformat.read(notebooks[0], as_version=4))
    return sources


def find_submissions(submitted: Path, sources: dict) -> list[Submission]:
    """Every ``<student>/<assignment>/`` folder under ``submitted``. The notebook is the one named
    as in the source, else the only ``.ipynb`` there (a learner who renamed it is still graded)."""
    found = []
    for student in sorted(p for p in submitted.iterdir() if p.is_dir()):
        for assignment in sorted(p for p in student.iterdir() if p.is_dir()):
            expected = assignment / sources.get(assignment.name, ("?",))[0]
            notebooks = sorted(assignment.glob("*.ipynb"))
            path = expected if expected.is_file() else (notebooks[0] if len(notebooks) == 1 else None)
            found.append(Submission(student.name, assignment.name, path))
    return found


def _grade(submission: Submission, source: nbformat.NotebookNode, out: Path, limits: dict) -> dict:
    """Worker: grade one submission, write its feedback page, return its CSV row."""
    from .feedback import feedback_html
    from .grade_one import Result, grade_notebook

    try:
        result = grade_notebook(submission.path, source, submission.student_id,
                                submission.assignment_id, **limits)
    except RuntimeError as error:  # the instructor's solution fails its own tests
        result = Result(submission.student_id, submission.assignment_id, f"not graded: {error}")
    page = out / "feedback" / submission.student_id / f"{submission.assignment_id}.html"
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text(feedback_html(result), encoding="utf-8")
    return dict(student_id=result.student_id, assignment_id=result.assignment_id,
                score=f"{result.score:g}", max_score=f"{result.max_score:g}", status=result.status,
                failed=" ".join(q.grade_id for q in result.questions if q.score < q.points))


def grade_class(submitted: Path, out: Path, solutions: Path = COURSE_ROOT / "solutions",
                jobs: int | None = None, progress: bool = True, **limits) -> list[dict]:
    """Grade every submission under ``submitted`` with ``jobs`` worker processes (default: the
    number of CPU cores) and write ``out/grades.csv`` and the feedback pages. ``limits`` go to
    :func:`~autograder.grading.grade_one.grade_notebook` (``cell_timeout``, ``total_timeout``
    in seconds, ``memory_limit`` in bytes).

    Returns:
        The CSV rows (dicts with the keys of ``CSV_COLUMNS``), sorted by student and assignment.

    Raises:
        FileNotFoundError: ``submitted`` or ``solutions`` is not a folder.
    """
    for folder in (submitted, solutions):
        if not folder.is_dir():
            raise FileNotFoundError(f"not a folder: {folder}")
    sources = load_sources(solutions)
    submissions = find_submissions(submitted, sources)
    out.mkdir(parents=True, exist_ok=True)
    rows = [dict(student_id=s.student_id, assignment_id=s.assignment_id, score="0", max_score="0",
                 status="unknown assignment", failed="")
            for s in submissions if s.assignment_id not in sources]
    todo = [s for s in submissions if s.assignment_id in sources]
    # Workers import torch once (warm_up); each submission then runs in a fork of a worker.
    with ProcessPoolExecutor(max_workers=jobs or os.cpu_count() or 1, mp_context=get_context("spawn"),
                             initializer=warm_up) as pool:
        futures = [pool.submit(_grade, s, sources[s.assignment_id][1], out, limits) for s in todo]
        for future in tqdm(as_completed(futures), total=len(futures), desc="grading", unit="notebook",
                           disable=not progress):
            rows.append(future.result())
    rows.sort(key=lambda r: (r["student_id"], r["assignment_id"]))
    with open(out / "grades.csv", "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=CSV_COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    return rows
