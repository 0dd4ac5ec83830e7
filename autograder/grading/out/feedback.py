"""Feedback pages: the graded notebook as one self-contained HTML page (readable offline, maths as
MathML, written by ``feedback_page``), with hidden tests and tracebacks removed."""

from __future__ import annotations

import copy
import html
import re

import nbformat

from ...check.checked import CHECKED_WHEN_GRADED
from ..judge.assemble import grade_id, is_test
from ..judge.grade_one import Result
from ..names import visible
from ..store.views import duration, late_words
from .feedback_page import page
from .redact import hidden_lines, redact, scrub

__all__ = ["feedback_notebook", "feedback_html", "gist", "add_verdicts", "keep_safe_outputs"]


def _question(grade_id: str) -> str:
    """A test cell's name for a learner: "Question 2" for ``q2_check``, else the grade id."""
    found = re.fullmatch(r"q(\d+)_check", grade_id)
    return f"Question {found.group(1)}" if found else grade_id


def _points(result: Result) -> str:
    """``6 / 8``, or with a late penalty ``2 / 8 (6 before the late-submission penalty of 4, 36 h
    late)``, or late without one ``6 / 8, late (36 h, no penalty)``: the score the gradebook (and
    ``nbgrader export``) gives, and how it came about."""
    if result.late_penalty <= 0:
        late = late_words(result.seconds_late, 0)
        return f"{result.score:g} / {result.max_score:g}" + (f", {late}" if late else "")
    final = max(result.score - result.late_penalty, 0)
    before = f"{result.score:g} before the late-submission penalty of {result.late_penalty:g}"
    if result.seconds_late > 0:
        before += f", {duration(result.seconds_late)} late"
    return f"{final:g} / {result.max_score:g} ({before})"


SUMMARY_CHARACTERS = 600  # a summary row's longest gist: the whole message is under the question's check cell


def gist(message: str) -> str:
    """What a question's row in the summary says of a failure: the message's first line (what is wrong)
    and its cause, which a message gives on its later lines: the lines that are not indented (the
    cause sentence, the explainer's words) and the reasons listed as ``  - entry: reason``; the
    indented detail lines (expected and received values, where an error was raised) stay under the
    check cell. At most ``SUMMARY_CHARACTERS`` characters."""
    first, *rest = message.splitlines() or [""]
    causes = [
        line.strip() for line in rest if line.strip() and (not line[0].isspace() or line.lstrip().startswith("- "))
    ]
    text = " ".join([first.strip(), *(line for line in causes if not line.startswith("[cause:"))])
    return text if len(text) <= SUMMARY_CHARACTERS else text[: SUMMARY_CHARACTERS - 4].rstrip() + " ..."


def _summary(result: Result, secret: set[str]) -> str:
    """The page's first part, as HTML: the score, the status and one row per question (every
    text redacted and escaped: a status, a message or a student's folder name is data)."""

    def e(text: str) -> str:
        return html.escape(scrub(text, secret), quote=True)

    rows = "\n".join(
        f'<tr><td>{e(_question(q.grade_id))}</td><td style="text-align:right">{q.score:g} / {q.points:g}</td>'
        f"<td>{e(gist(failure)) if (failure := result.failure(q)) else 'passed'}</td></tr>"
        for q in result.questions
    )
    where = (
        "<p>Under each check cell, a line starting with Graded: gives its points and, for a failed check, the "
        "reason in autograd terms (checks judged against the instructor's solution are reported only there). "
        "Hidden tests are not shown.</p>"
        if result.notebook is not None
        else f"<p>Nothing of this submission ran ({e(result.status)}), so no cell is shown.</p>"
    )
    return (
        f'<section class="summary rendered_html">\n<h1>Feedback: {e(result.assignment_id)}</h1>\n'
        f"<p>Student <strong>{e(result.student_id)}</strong>: <strong>{_points(result)}</strong> "
        f"points. Status: {e(result.status)}.</p>\n"
        '<table>\n<thead><tr><th style="text-align:left">question</th><th style="text-align:right">points</th>'
        f'<th style="text-align:left">result</th></tr></thead>\n<tbody>\n{rows}\n</tbody>\n</table>\n'
        f"{where}\n</section>"
    )


def feedback_notebook(result: Result) -> nbformat.NotebookNode:
    """The graded notebook prepared for the learner: a summary cell first; hidden-test regions
    cut from test cells (a line says they ran); error outputs reduced to ``Ename: message``
    (tracebacks would quote hidden test lines); under each test cell, its verdict, in place of
    the "checked when graded" lines a check printed in the learner's process; no "Next" links (they point
    into the course, not next to the page). Returns a new notebook (the page's summary is not in
    it: :func:`feedback_html` writes it from ``result``)."""
    nb = copy.deepcopy(result.notebook) if result.notebook is not None else nbformat.v4.new_notebook()
    redact(nb)
    # links into the course, and check.summary() (the page's own summary says it from the verdicts)
    nb.cells = [c for c in nb.cells if grade_id(c) not in ("next_steps", "where_you_stand_text", "where_you_stand")]
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":  # in any cell: the message says enough
                out["traceback"] = [f"{out.get('ename', 'Error')}: {out.get('evalue', '')}"]
    keep_safe_outputs(nb)
    add_verdicts(nb, result)
    return nb


def keep_safe_outputs(nb: nbformat.NotebookNode) -> None:
    """Reduce every output's data to :data:`SAFE_OUTPUTS`, in place: outputs come from the learner's
    process, so no HTML, SVG or script of theirs reaches a page or formgrader."""
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            if "data" in out:
                out["data"] = {k: v for k, v in out["data"].items() if k in SAFE_OUTPUTS} or {"text/plain": ""}


def add_verdicts(nb: nbformat.NotebookNode, result: Result, secret: set[str] = frozenset()) -> None:
    """Under each test cell of ``nb`` (in place), its verdict from ``result`` as a stdout line
    ``Graded: <score> / <points>. <message or "All checks passed.">``, in place of the "checked
    when graded" lines a check printed in the learner's process (they read like a pass). The
    message is scrubbed of the lines in ``secret`` (the hidden tests' lines). The verdict and the
    test cell's other stream outputs show control characters and ANSI escapes as text
    (``names.visible``): JupyterLab joins a cell's stdout into one text and interprets a ``\\r`` or
    an escape in it, so a learner's ``\\rGraded: 2 / 2`` would otherwise overwrite the verdict."""
    verdicts = {q.grade_id: q for q in result.questions}
    for cell in nb.cells:
        question = verdicts.get(grade_id(cell)) if is_test(cell) else None
        if question is None:
            continue
        cell["outputs"] = _without_pending_lines(cell.get("outputs", []))
        for out in cell["outputs"]:  # the learner's lines above the verdict cannot overwrite or colour it
            if out.get("output_type") == "stream":
                out["text"] = visible(out.get("text", ""))
        verdict = visible(scrub(result.failure(question), secret)) or "All checks passed."
        said = f"Graded: {question.score:g} / {question.points:g}. {verdict}"
        cell.setdefault("outputs", []).append(nbformat.v4.new_output("stream", name="stdout", text=said + "\n"))


SAFE_OUTPUTS = ("text/plain", "image/png", "image/jpeg")  # what a feedback page shows of an output


def _without_pending_lines(outputs: list) -> list:
    """A test cell's outputs without the "<check>: checked when graded" lines of its stdout (the
    page shows the verdict of those checks below them), nor a check's error that has no traceback
    lines (a ``CheckFailed`` shows only its message, which the verdict line says in full: formgrader
    would draw it as an empty box above that line)."""
    kept = []
    for out in outputs:
        if out.get("output_type") == "error" and not any(str(line).strip() for line in out.get("traceback") or []):
            continue
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


def feedback_html(result: Result) -> str:
    """The feedback page as a standalone HTML document (str) that loads nothing from the network
    and holds nothing of the submission but escaped text (see ``feedback_page``), titled
    ``<assignment> — <student>``; every text on it is redacted against the hidden tests last."""
    secret = hidden_lines(result.notebook) if result.notebook is not None else set()
    return page(
        f"{result.assignment_id} \u2014 {result.student_id}",
        _summary(result, secret),
        feedback_notebook(result),
        secret,
    )
