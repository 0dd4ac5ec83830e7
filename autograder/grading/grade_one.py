"""Grade one submission in its own fresh kernel (a new process), without touching the file."""
from __future__ import annotations

import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellTimeoutError, DeadKernelError

from .assemble import assemble, grade_id, is_test, questions

__all__ = ["QuestionResult", "Result", "grade_notebook", "failure_message"]


@dataclass
class QuestionResult:
    """One test cell's outcome: ``score``/``points`` (float) and, when it failed, ``message``:
    the exception's type and message only (never the test's source or traceback)."""

    grade_id: str
    points: float
    score: float = 0.0
    message: str = ""


@dataclass
class Result:
    """A graded submission. ``status`` is ``"graded"`` or says why grading stopped early
    (``"timeout in <cell>"``, ``"kernel died in <cell>"``, ``"unreadable: ..."``,
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


def failure_message(cell) -> str | None:
    """``"Ename: evalue"`` of the first error output of an executed cell, or None if it passed."""
    for out in cell.get("outputs", []):
        if out.get("output_type") == "error":
            value = out.get("evalue", "")
            return f"{out.get('ename', 'Error')}: {value}" if value else out.get("ename", "Error")
    return None


def grade_notebook(path: Path | None, source: nbformat.NotebookNode, student_id: str,
                   assignment_id: str, cell_timeout: float = 120, kernel_name: str = "python3") -> Result:
    """Execute the learner's answers with the source's tests and score each test cell.

    A test cell earns its points (from the source) when it runs without an error output;
    stderr output (PyTorch warnings) does not matter. The submission is read once and never
    written: execution happens in a fresh temporary folder.

    Args:
        path: the submitted ``.ipynb`` (None when the folder holds none).
        source: the assignment's nbgrader source notebook.
        cell_timeout: seconds any one cell may run.

    Returns:
        A :class:`Result`; this function reports every failure there and does not raise for a
        broken submission.
    """
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
    with tempfile.TemporaryDirectory(prefix="grade-") as workdir:
        started, finished = [], set()
        client = NotebookClient(graded, timeout=cell_timeout, kernel_name=kernel_name,
                                allow_errors=True, resources={"metadata": {"path": workdir}},
                                on_cell_start=lambda cell, cell_index: started.append(cell_index),
                                on_cell_executed=lambda cell, cell_index, execute_reply:
                                    finished.add(cell_index))
        try:
            # The kernel's own stderr (start-up notices, crash dumps) is not the learner's output.
            client.execute(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        except CellTimeoutError:
            result.status = f"timeout in {_cell_name(graded, started)}"
        except DeadKernelError:
            result.status = f"kernel died in {_cell_name(graded, started)}"
        except Exception as error:  # kernel failed to start, or nbclient itself failed
            result.status = f"not executed: {type(error).__name__}"
    by_id = {q.grade_id: q for q in result.questions}
    for index in sorted(finished):  # a cell cut short by a timeout or a dead kernel never passes
        cell = graded.cells[index]
        if is_test(cell):
            q = by_id[grade_id(cell)]
            q.message = failure_message(cell) or ""
            q.score = 0.0 if q.message else q.points
    for q in result.questions:
        if q.score == 0 and not q.message:
            q.message = "not run: " + result.status
    result.notebook = graded
    return result


def _cell_name(nb: nbformat.NotebookNode, started: list[int]) -> str:
    """Name of the last cell that started executing (its grade_id or its position)."""
    if not started:
        return "the first cell"
    return grade_id(nb.cells[started[-1]]) or f"cell {started[-1] + 1}"
