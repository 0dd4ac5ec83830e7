"""Grade one submission in its own fresh process, without touching the file.

A test cell earns its points (from the source) when
  1. it ran to the end without an error (stderr output, such as PyTorch warnings, does not
     matter), and
  2. every value its checks compared matches, *in the grader*, the value the instructor's
     solution gave for the same check (``values.compare``), so a learner who replaces comparison
     functions, imports or IPython's cell execution gains nothing.
The solution's values come from running the source notebook once per assignment (``reference``).
"""
from __future__ import annotations

import hashlib
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from .assemble import assemble, grade_id, is_test, questions
from .runner import run_cells, warm_up
from .values import compare

__all__ = ["QuestionResult", "Result", "reference", "grade_notebook"]

_REFERENCES: dict[str, dict[str, list]] = {}


@dataclass
class QuestionResult:
    """One test cell's outcome: ``score``/``points`` (float) and, when it failed, ``message``:
    the exception's type and message, or what differed from the solution (never test source)."""

    grade_id: str
    points: float
    score: float = 0.0
    message: str = ""


@dataclass
class Result:
    """A graded submission. ``status`` is ``"graded"`` or says why grading stopped early
    (``"timeout in q2_check"``, ``"crashed (signal 11) in q1_answer"``, ``"unreadable: ..."``,
    ``"no notebook"``); questions after such a stop score 0."""

    student_id: str
    assignment_id: str
    status: str
    questions: list[QuestionResult] = field(default_factory=list)
    notebook: nbformat.NotebookNode | None = None

    @property
    def score(self) -> float:
        return sum(q.score for q in self.questions)

    @property
    def max_score(self) -> float:
        return sum(q.points for q in self.questions)


def _code_cells(nb: nbformat.NotebookNode) -> list:
    return [c for c in nb.cells if c.cell_type == "code"]


def reference(source: nbformat.NotebookNode, **limits) -> dict[str, list]:
    """The values each test cell's checks report when the source notebook (with its solutions)
    runs: ``{test grade_id: [[name, encoded value, tolerance], ...]}``. Cached per source.

    Raises:
        RuntimeError: a test cell fails on the instructor's own solution.
    """
    warm_up()  # forks then start with torch imported (a no-op after the first call)
    key = hashlib.sha256(nbformat.writes(source).encode()).hexdigest()
    if key not in _REFERENCES:
        cells = _code_cells(source)
        with tempfile.TemporaryDirectory(prefix="reference-") as workdir:
            run = run_cells([c.source for c in cells], workdir, **limits)
        failed = [grade_id(c) for c, r in zip(cells, run.cells) if is_test(c) and (not r.finished or r.error)]
        if failed:
            raise RuntimeError(f"the solution fails its own tests {failed} ({run.status})")
        _REFERENCES[key] = {grade_id(c): r.exports for c, r in zip(cells, run.cells) if is_test(c)}
    return _REFERENCES[key]


def _verdict(cell_run, expected: list) -> str:
    """Empty when the cell passed; otherwise why, in learner terms."""
    if cell_run.error:
        name, value = cell_run.error
        return f"{name}: {value}" if value else name
    got = cell_run.exports
    if len(got) < len(expected) or any(g[0] != e[0] for g, e in zip(got, expected)):
        return ("the checks of this question did not all run (the notebook changed how cells or "
                "checks run), so it earns no points")
    for (name, value, _), (_, want, tolerance) in zip(got, expected):
        ok, message = compare(value, want, name, tolerance)
        if not ok:
            return f"checked again outside your notebook: {message}"
    return ""


def _run_past_stops(cells: list, limits: dict, retries: int = 3):
    """Run the cells; when one times out or kills its process, run them again in a new process
    with that cell left out, so one runaway question does not cost the others (at most
    ``retries`` times, within the notebook's total time). Returns ``(last run, {cell index:
    why it was left out})``."""
    stops: dict[int, str] = {}
    deadline = time.monotonic() + limits["total_timeout"]
    while True:
        texts = [f"# left out: {stops[i]}" if i in stops else c.source for i, c in enumerate(cells)]
        with tempfile.TemporaryDirectory(prefix="grade-") as workdir:
            run = run_cells(texts, workdir, **dict(limits, total_timeout=max(deadline - time.monotonic(), 1)))
        if run.status == "ok" or run.cell is None:
            return run, stops
        stops[run.cell] = run.status
        if len(stops) > retries or run.status == "notebook time limit":
            return run, stops


def grade_notebook(path: Path | None, source: nbformat.NotebookNode, student_id: str,
                   assignment_id: str, cell_timeout: float = 60, total_timeout: float = 300,
                   memory_limit: int | None = 2 * 1024 ** 3) -> Result:
    """Run the learner's answers with the source's tests in a fresh process and score each test
    cell (see the module docstring). The submission is read once and never written; the
    notebook runs in a new temporary folder.

    Args:
        path: the submitted ``.ipynb`` (None when the folder holds none).
        source: the assignment's nbgrader source notebook.
        cell_timeout, total_timeout: seconds per cell and for the whole notebook.
        memory_limit: bytes of memory the submission may add (None: no limit).

    Returns:
        A :class:`Result`. A broken submission gets a status; nothing it does raises here.

    Raises:
        RuntimeError: the source's own solution fails its tests (an instructor error).
    """
    limits = dict(cell_timeout=cell_timeout, total_timeout=total_timeout, memory_limit=memory_limit)
    expected = reference(source, **limits)
    result = Result(student_id, assignment_id, "graded",
                    [QuestionResult(q.grade_id, q.points) for q in questions(source)])
    if path is None:
        result.status = "no notebook"
        return result
    try:
        submission = nbformat.reads(path.read_bytes().decode("utf-8"), as_version=4)
    except Exception as error:  # truncated JSON, invalid UTF-8, not a notebook at all
        result.status = f"unreadable: {type(error).__name__}"
        return result
    graded = assemble(source, submission)
    cells = _code_cells(graded)
    run, stops = _run_past_stops(cells, limits)
    if stops:
        result.status = "; ".join(f"{status} in {grade_id(cells[i]) or f'cell {i + 1}'}" for i, status in stops.items())
    by_id = {q.grade_id: q for q in result.questions}
    for count, (cell, cell_run) in enumerate(zip(cells, run.cells), start=1):
        cell.outputs, cell.execution_count = cell_run.outputs, count if cell_run.finished else None
        if is_test(cell):
            q = by_id[grade_id(cell)]
            stopped = stops.get(count - 1) or (run.status if not cell_run.finished else None)
            q.message = f"stopped: {stopped}" if stopped else _verdict(cell_run, expected[q.grade_id])
            q.score = 0.0 if q.message else q.points
    result.notebook = graded
    return result
