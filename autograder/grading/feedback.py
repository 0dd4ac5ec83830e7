"""Feedback pages: the graded notebook as one self-contained HTML page (readable offline, maths as
MathML), with hidden tests and tracebacks removed."""

from __future__ import annotations

import copy
import html
import re
from functools import lru_cache

import nbformat

from ..checked import CHECKED_WHEN_GRADED
from .assemble import grade_id, is_test
from .grade_one import Result
from .offline_html import OfflineHTMLExporter
from .redact import redact

__all__ = ["feedback_notebook", "feedback_html"]


def _question(grade_id: str) -> str:
    """A test cell's name for a learner: "Question 2" for ``q2_check``, else the grade id."""
    found = re.fullmatch(r"q(\d+)_check", grade_id)
    return f"Question {found.group(1)}" if found else grade_id


def _summary(result: Result) -> str:
    rows = "\n".join(
        f"| {_question(q.grade_id)} | {q.score:g} / {q.points:g} | "
        f"{html.escape(q.message.splitlines()[0]) if q.message else 'passed'} |"
        for q in result.questions
    )
    return (
        f"# Feedback: {html.escape(result.assignment_id)}\n\n"
        f"Student **{html.escape(result.student_id)}**: **{result.score:g} / {result.max_score:g}** "
        f"points. Status: {html.escape(result.status)}.\n\n"
        f"| question | points | result |\n|:---|---:|:---|\n{rows}\n\n"
        "Under each check cell, a line starting with Graded: gives its points and, for a failed check, the "
        "reason in autograd terms (checks judged against the instructor's solution are reported only there). "
        "Hidden tests are not shown."
    )


def feedback_notebook(result: Result) -> nbformat.NotebookNode:
    """The graded notebook prepared for the learner: a summary cell first; hidden-test regions
    cut from test cells (a line says they ran); error outputs reduced to ``Ename: message``
    (tracebacks would quote hidden test lines); under each test cell, its verdict, in place of
    the "checked when graded" lines a check printed in the learner's process; no "Next" links (they point
    into the course, not next to the page). Returns a new notebook."""
    nb = copy.deepcopy(result.notebook) if result.notebook is not None else nbformat.v4.new_notebook()
    redact(nb)
    verdicts = {q.grade_id: q for q in result.questions}
    nb.cells = [c for c in nb.cells if grade_id(c) != "next_steps"]
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":  # in any cell: the message says enough
                out["traceback"] = [f"{out.get('ename', 'Error')}: {out.get('evalue', '')}"]
            if "data" in out:  # outputs come from the learner's process: no HTML, SVG or script in the page
                out["data"] = {k: v for k, v in out["data"].items() if k in SAFE_OUTPUTS} or {"text/plain": ""}
        question = verdicts.get(grade_id(cell)) if is_test(cell) else None
        if question is not None:
            cell["outputs"] = _without_pending_lines(cell.get("outputs", []))
            said = f"Graded: {question.score:g} / {question.points:g}. {question.message or 'All checks passed.'}"
            cell.setdefault("outputs", []).append(nbformat.v4.new_output("stream", name="stdout", text=said + "\n"))
    nb.cells.insert(0, nbformat.v4.new_markdown_cell(_summary(result)))
    return nb


SAFE_OUTPUTS = ("text/plain", "image/png", "image/jpeg")  # what a feedback page shows of an output


def _without_pending_lines(outputs: list) -> list:
    """A test cell's outputs without the "<check>: checked when graded" lines of its stdout: the
    page shows the verdict of those checks below them."""
    kept = []
    for out in outputs:
        if out.get("output_type") == "stream":
            lines = [
                ln
                for ln in out.get("text", "").splitlines(keepends=True)
                if not ln.rstrip("\n").endswith(CHECKED_WHEN_GRADED)
            ]
            if not lines:
                continue
            out["text"] = "".join(lines)
        kept.append(out)
    return kept


@lru_cache(maxsize=1)
def _exporter() -> OfflineHTMLExporter:
    return OfflineHTMLExporter()  # building one costs ~0.5 s: once per worker


def feedback_html(result: Result) -> str:
    """The feedback page as a standalone HTML document (str) that loads nothing from the network:
    styles inline, no scripts, markdown maths as MathML."""
    body, _ = _exporter().from_notebook_node(feedback_notebook(result))
    return body
