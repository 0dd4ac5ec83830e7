"""Run an exercise's source notebook in this process, as the class grader splits it (a test aid).

A test cell runs either as written (its REFERENCE regions intact: the learner's own self-check,
and the solution run whose records the grader keeps) or with its regions withheld
(``autograder.grading.judge.references.withhold``: what the grader sends to a learner's process). The
withheld run's records are then judged against the solution's plain-run records with
``autograder.grading.judge.verdict.verdict``, as the grader does, but without processes or time limits.
"""

from __future__ import annotations

import contextlib
import functools
import io
import linecache
import re
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import torch

from autograder import check
from autograder.grading.judge.assemble import grade_id, is_answer, is_test, withheld_here
from autograder.grading.judge.references import withhold
from autograder.grading.judge.verdict import verdict

ROOT = Path(__file__).resolve().parents[2]
EXERCISES = sorted(path.name for path in (ROOT / "solutions").iterdir() if (path / f"{path.name}.ipynb").exists())


def source(exercise: str) -> nbformat.NotebookNode:
    """The instructor's source notebook ``solutions/<exercise>/<exercise>.ipynb``."""
    return nbformat.read(ROOT / "solutions" / exercise / f"{exercise}.ipynb", as_version=4)


_MARKERS = re.compile(r"^[ \t]*### (?:BEGIN|END) SOLUTION[ \t]*\n", re.MULTILINE)


def solved_answers(exercise: str) -> dict[str, str]:
    """``{answer grade_id: source}`` of the solution, as a learner would write it (nbgrader's markers taken out)."""
    return {grade_id(c): _MARKERS.sub("", c.source) for c in source(exercise).cells if is_answer(c)}


def blank_answers(exercise: str) -> dict[str, str]:
    """``{answer grade_id: source}`` of the released notebook, whose answers are still stubs."""
    release = nbformat.read(ROOT / "exercises" / exercise / f"{exercise}.ipynb", as_version=4)
    return {grade_id(c): c.source for c in release.cells if is_answer(c)}


@dataclass
class Run:
    """One in-process run of a notebook: the records each test cell's checks made, and the first
    the exception each cell that failed raised (``"CheckFailed: ..."``, its whole message), by grade_id."""

    records: dict[str, list[check.Checked]] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)


def run(nb: nbformat.NotebookNode, withheld: bool, answers: dict[str, str] | None = None) -> Run:
    """Run the code cells of ``nb`` in one fresh namespace, from ``torch.manual_seed(0)``, with
    test cells withheld when ``withheld`` and answer cells replaced by ``answers`` (by grade_id).
    Output is swallowed; a failing cell is recorded and the next cells run."""
    result, records = Run(), []
    namespace = {"__name__": "__main__"}
    torch.manual_seed(0)
    check.report_to(records.append)
    try:
        for cell in nb.cells:
            if cell.cell_type != "code":
                continue
            gid = grade_id(cell)
            text = (answers or {}).get(gid, cell.source)
            # IPython's line magics (the setup cell's %load_ext autograder) are not Python: skipped
            # here, run by the graders' IPython
            text = "".join(line for line in text.splitlines(True) if not line.startswith("%"))
            if withheld and withheld_here(cell):
                text = withhold(text)
            records.clear()
            try:
                # the cell's lines are registered, as IPython does, so feedback can quote them
                linecache.cache[f"<{gid}>"] = (len(text), None, text.splitlines(True), f"<{gid}>")
                with contextlib.redirect_stdout(io.StringIO()):
                    exec(compile(text, f"<{gid}>", "exec"), namespace)
            except Exception as error:  # noqa: BLE001 -- a failing cell is an outcome to report
                result.errors[gid] = f"{type(error).__name__}: {error}"
            if is_test(cell):
                result.records[gid] = list(records)
    finally:
        check.report_to(None)
    return result


@functools.cache
def solution_run(exercise: str) -> Run:
    """The solution's own run of ``exercise`` (references in place), made once per test session."""
    return run(source(exercise), withheld=False)


def grade(nb: nbformat.NotebookNode, solution: Run, answers: dict[str, str] | None = None) -> dict[str, str]:
    """``{test grade_id: ""}`` for a passed question, else why it failed: ``nb`` run withheld with
    ``answers``, each cell's records judged against ``solution``'s (its plain run)."""
    learner = run(nb, withheld=True, answers=answers)
    return {
        gid: learner.errors.get(gid) or verdict(learner.records.get(gid, []), expected)
        for gid, expected in solution.records.items()
    }
