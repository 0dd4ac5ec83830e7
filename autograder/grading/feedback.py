"""Feedback pages: the graded notebook as HTML, with hidden tests and tracebacks removed."""
from __future__ import annotations

import copy
import html
from functools import lru_cache

import nbformat
from nbconvert import HTMLExporter

from .assemble import HIDDEN_TESTS, is_test
from .grade_one import Result

__all__ = ["feedback_notebook", "feedback_html"]



def _summary(result: Result) -> str:
    rows = "\n".join(
        f"| {q.grade_id} | {q.score:g} / {q.points:g} | {html.escape(q.message.splitlines()[0]) if q.message else 'passed'} |"
        for q in result.questions)
    return (f"# Feedback: {html.escape(result.assignment_id)}\n\n"
            f"Student **{html.escape(result.student_id)}**: **{result.score:g} / {result.max_score:g}** "
            f"points. Status: {html.escape(result.status)}.\n\n"
            f"| question | points | result |\n|---|---|---|\n{rows}\n\n"
            "Each check below shows what it printed; a failed check ends with the reason in "
            "autograd terms. Hidden tests are not shown.")


def feedback_notebook(result: Result) -> nbformat.NotebookNode:
    """The graded notebook prepared for the learner: a summary cell first; hidden-test regions
    cut from test cells (a line says they ran); error outputs reduced to ``Ename: message``
    (tracebacks would quote hidden test lines). Returns a new notebook."""
    nb = copy.deepcopy(result.notebook) if result.notebook is not None else nbformat.v4.new_notebook()
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        if is_test(cell):
            cell.source = HIDDEN_TESTS.sub("# (hidden tests ran here)\n", cell.source)
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                out["traceback"] = [f"{out.get('ename', 'Error')}: {out.get('evalue', '')}"]
    nb.cells.insert(0, nbformat.v4.new_markdown_cell(_summary(result)))
    return nb


@lru_cache(maxsize=1)
def _exporter() -> HTMLExporter:
    return HTMLExporter(template_name="classic")  # building one costs ~0.5 s: once per worker


def feedback_html(result: Result) -> str:
    """The feedback page as a standalone HTML document (str)."""
    body, _ = _exporter().from_notebook_node(feedback_notebook(result))
    return body
