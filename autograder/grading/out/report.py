"""What the class got wrong: the class report, built from the causes of its failed checks.

Input is one :class:`Row` per graded question of a submission: from nbgrader's gradebook
(:func:`rows_from_gradebook`, everything graded so far; each cell's cause key from the grader's
own table, ``store.own_tables``, never from the comment's text) or from a grade run's in-memory results
(:func:`rows_from_results`). :func:`summarize` counts them:

- per assignment and question: the points distribution, the pass rate, and the causes behind the
  failures, most frequent first, each with its count, its students and one example message;
- per student: the causes they hit, and where;
- per cause, across the course: the questions it shows up in.

:func:`write_report` writes ``OUT/report.html`` (``report_page``: one self-contained page, no
scripts, plots as embedded PNG) and ``OUT/report.csv``; :func:`terminal_summary` gives the lines
``grade`` prints at its end. A failure without a cause key is counted under its message's first
line with numbers and names taken out (``causes.message_group``). Example messages are scrubbed of
hidden-test lines as feedback pages are (``redact``); keys never hold a hidden input.
"""

from __future__ import annotations

import copy
import csv
import os
from collections import Counter, defaultdict
from collections.abc import Iterable
from pathlib import Path

import nbformat

from ..names import csv_cell, terminal
from ..store import default_db_url, own_tables
from .redact import redact
from .summary import CauseCount, QuestionSummary, Row, Summary, each, shortened

__all__ = [
    "Row",
    "CauseCount",
    "QuestionSummary",
    "Summary",
    "rows_from_results",
    "rows_from_gradebook",
    "late_from_gradebook",
    "summarize",
    "write_report",
    "report_from_results",
    "report_from_gradebook",
    "default_db_url",
    "after_grade",
    "terminal_summary",
    "causes_in_words",
    "CSV_COLUMNS",
]

CSV_COLUMNS = [
    "assignment_id",
    "question",
    "points",
    "submissions",
    "passed",
    "pass_rate",
    "mean_score",
    "cause",
    "count",
    "students",
    "example",
]
_EXAMPLE_CHARS = 600  # an example message is cut here: the report shows a cause, not a transcript


def rows_from_results(results: Iterable) -> list[Row]:
    """Rows from a grade run's :class:`~autograder.grading.judge.grade_one.Result` objects."""
    return [
        Row(r.student_id, r.assignment_id, q.grade_id, q.score, q.points, q.message, q.cause, r.status)
        for r in results
        for q in r.questions
    ]


def rows_from_gradebook(db_url: str) -> list[Row]:
    """Rows from nbgrader's gradebook at ``db_url``, read through nbgrader's API (its ORM models,
    in one query): each submitted notebook's graded cells (``Grade.auto_score`` or a manual score
    set), scored as nbgrader scores them (``Grade.score``: a manual score given in formgrader
    counts), each with its autograder comment (the failure message) and the cause key the grader
    recorded beside it (``store.own_tables``: never read out of the comment's text), and the
    submission's status the grader recorded (``no notebook``, ...)."""
    from nbgrader.api import (
        Assignment,
        Comment,
        Grade,
        Gradebook,
        GradeCell,
        SubmittedAssignment,
        SubmittedNotebook,
    )
    from sqlalchemy import and_, or_

    with Gradebook(db_url) as gradebook:
        found = (
            gradebook.db.query(
                SubmittedAssignment.student_id,
                Assignment.name,
                GradeCell.name,
                Grade.score,
                GradeCell.max_score,
                Comment.auto_comment,
                Comment.id,
                SubmittedAssignment.id,
            )
            .select_from(Grade)
            .join(GradeCell, GradeCell.id == Grade.cell_id)
            .join(SubmittedNotebook, SubmittedNotebook.id == Grade.notebook_id)
            .join(SubmittedAssignment, SubmittedAssignment.id == SubmittedNotebook.assignment_id)
            .join(Assignment, Assignment.id == SubmittedAssignment.assignment_id)
            .outerjoin(Comment, and_(Comment.cell_id == Grade.cell_id, Comment.notebook_id == Grade.notebook_id))
            .filter(or_(Grade.auto_score.isnot(None), Grade.manual_score.isnot(None)))  # not: waiting for a person
            .all()
        )
        causes = own_tables.read(gradebook.engine, own_tables.CAUSE_TABLE)
        statuses = own_tables.read(gradebook.engine, own_tables.STATUS_TABLE)
    rows = []
    for student, assignment, question, score, points, comment, comment_id, submission_id in found:
        cause = causes.get(comment_id, "")
        line = f"\n[cause: {cause}]"  # the line the store wrote for formgrader's reader, when it did
        message = (comment or "").removesuffix(line) if cause else (comment or "")
        score, points = float(score or 0.0), float(points or 0.0)
        status = str(statuses.get(submission_id, ""))  # the grader's ("" for plain nbgrader's submissions)
        rows.append(Row(student, assignment, question, score, points, message, cause, status))
    return rows


def _scrub(messages: dict[tuple[str, str, str], str], sources: dict) -> dict[tuple[str, str, str], str]:
    """The messages (keyed by assignment, question, cause) without lines that quote a hidden test
    of their assignment's source (``sources``: ``{assignment_id: (name, notebook)}``), cut to
    ``_EXAMPLE_CHARS``. A message whose assignment has no source keeps its first line only."""
    by_assignment = defaultdict(list)
    for where in messages:
        by_assignment[where[0]].append(where)
    scrubbed = {}
    for assignment, wheres in by_assignment.items():
        if assignment not in sources:
            scrubbed.update({w: messages[w].split("\n", 1)[0][:_EXAMPLE_CHARS] for w in wheres})
            continue
        # the messages as outputs of one extra cell: redact drops every output line that quotes a
        # hidden test of the notebook, as it does for a feedback page
        nb = copy.deepcopy(sources[assignment][1])
        nb.cells.append(
            nbformat.v4.new_code_cell(
                outputs=[nbformat.v4.new_output("stream", name="stdout", text=messages[w]) for w in wheres]
            )
        )
        for where, out in zip(wheres, redact(nb).cells[-1].outputs):
            scrubbed[where] = out["text"][:_EXAMPLE_CHARS]
    return scrubbed


def summarize(rows: Iterable[Row], sources: dict | None = None) -> Summary:
    """Count ``rows`` (see the module docstring). ``sources``: ``{assignment_id: (notebook name,
    nbgrader source notebook)}`` (``batch.load_sources``), whose hidden tests no example quotes."""
    rows = list(rows)
    by_question: dict[tuple[str, str], list[Row]] = defaultdict(list)
    for row in rows:
        by_question[(row.assignment_id, row.question)].append(row)
    examples, questions = {}, []
    students: dict[str, dict[str, list]] = defaultdict(lambda: defaultdict(list))
    causes: dict[str, Counter] = defaultdict(Counter)
    for (assignment, question), group in sorted(by_question.items()):
        failed: dict[str, list[Row]] = defaultdict(list)
        for row in sorted(group, key=lambda r: r.student_id):
            if not row.passed:
                failed[row.group].append(row)
                students[row.student_id][row.group].append((assignment, question))
                causes[row.group][(assignment, question)] += 1
        counted = []
        for cause, hit in sorted(failed.items(), key=lambda item: (-len(item[1]), item[0])):
            # the example: the most common wording among those who hit it (the first such, by student)
            example = Counter(r.said for r in hit).most_common(1)[0][0]
            examples[(assignment, question, cause)] = example
            counted.append(CauseCount(cause, len(hit), sorted({r.student_id for r in hit}), ""))
        points = max(r.points for r in group)
        questions.append(QuestionSummary(assignment, question, points, [r.score for r in group], counted))
    scrubbed = _scrub(examples, sources or {})
    for q in questions:
        for c in q.causes:
            c.example = scrubbed[(q.assignment_id, q.question, c.cause)]
    ordered = dict(sorted(causes.items(), key=lambda item: (-sum(item[1].values()), item[0])))
    return Summary(
        questions,
        {s: dict(students[s]) for s in sorted(students)},
        {c: dict(where) for c, where in ordered.items()},
        sorted({r.student_id for r in rows}),
    )


def _csv_rows(summary: Summary) -> list[list[str]]:
    lines = []
    for q in summary.questions:
        head = [
            q.assignment_id,
            q.question,
            f"{q.points:g}",
            str(q.submissions),
            str(q.passed),
            f"{q.pass_rate:.3f}",
            f"{q.mean:.3f}",
        ]
        for c in q.causes or [CauseCount("", 0, [], "")]:
            lines.append([*head, c.cause, str(c.count), " ".join(c.students), c.example])
    return [[csv_cell(cell) for cell in line] for line in lines]


def late_from_gradebook(db_url: str) -> dict[str, list[tuple[str, str]]]:
    """``{student: [(assignment, how late)]}`` for each late submission of the gradebook at
    ``db_url`` (nbgrader's ``total_seconds_late`` above 0, with or without a penalty), how late in
    ``store.views.late_words``' words (``-8 (late, 36 h)``, ``late (36 h, no penalty)``); sorted by
    student, then assignment."""
    from nbgrader.api import Gradebook, SubmittedAssignment

    from ..store.views import late_words

    late: dict[str, list[tuple[str, str]]] = defaultdict(list)
    with Gradebook(db_url) as gradebook:
        for sub in gradebook.db.query(SubmittedAssignment).all():
            words = late_words(sub.total_seconds_late, float(sub.late_submission_penalty or 0))
            if words:
                late[sub.student_id].append((sub.assignment.name, words))
    return {s: sorted(late[s]) for s in sorted(late)}


def write_report(
    rows: Iterable[Row], out: Path, sources: dict | None = None, late: dict[str, list[tuple[str, str]]] | None = None
) -> Summary:
    """Write ``out/report.html`` and ``out/report.csv`` (one row per question and cause; a
    question that nobody failed has one row with an empty cause) for ``rows``; each file is
    written whole, then moved into place. ``late``: :func:`late_from_gradebook`'s late submissions, which
    the page names beside each learner. Returns the :class:`Summary`."""
    from .report_page import report_html

    summary = summarize(rows, sources)
    summary.late = late or {}
    out.mkdir(parents=True, exist_ok=True)
    partial = out / "report.csv.partial"
    with open(partial, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(CSV_COLUMNS)
        writer.writerows(_csv_rows(summary))
    os.replace(partial, out / "report.csv")
    page = out / "report.html.partial"
    page.write_text(report_html(summary), encoding="utf-8", errors="replace")
    os.replace(page, out / "report.html")
    return summary


CAUSE_WIDTH = 90  # characters of a cause on the terminal


def causes_in_words(causes: list[CauseCount], shown: int = 3, width: int = CAUSE_WIDTH) -> str:
    """What a question failed of, in one phrase: ``top cause: K (n)`` when one cause is the most
    frequent, ``(+k more causes)`` when others follow; when several share the highest count it says
    so rather than pick one: ``top causes (tied, 2 each): A; B (+1 more cause)``, or, when every
    cause ties, ``causes: 3 different, each once: A; B; C``. Tied causes come in the report's
    order (alphabetical), at most ``shown`` of them (then ``and k more``), each cut to ``width``
    characters with ``…`` (``summary.shortened``; the report has it whole). "" when ``causes`` is empty."""
    if not causes:
        return ""
    top = causes[0]
    tied = [c for c in causes if c.count == top.count]
    rest = len(causes) - len(tied)
    also = f" (+{rest} more cause{'s' if rest > 1 else ''})" if rest else ""
    if len(tied) == 1:
        return f"top cause: {shortened(top.cause, width)} ({top.count}){also}"
    names = "; ".join(shortened(c.cause, width) for c in tied[:shown])
    if len(tied) > shown:
        names += f"; and {len(tied) - shown} more"
    if not rest:
        return f"causes: {len(tied)} different, {each(top.count)}: {names}"
    return f"top causes (tied, {each(top.count)}): {names}{also}"


def terminal_summary(summary: Summary, out: Path | None = None, lowest: int = 3) -> str:
    """A few lines for the terminal: the ``lowest`` questions by pass rate with their top cause
    (or the causes tied for it: :func:`causes_in_words`), then where the report is (when ``out`` is
    given). Everything a submission named is escaped (``names.terminal``)."""
    failing = sorted(
        (q for q in summary.questions if q.passed < q.submissions), key=lambda q: (q.pass_rate, q.question)
    )
    lines = ["Lowest pass rates:" if failing else "Every question was passed by every submission."]
    for q in failing[:lowest]:
        lines.append(
            terminal(
                f"  {q.assignment_id} {q.question}: {q.passed}/{q.submissions} passed ({q.pass_rate:.0%}); "
                + causes_in_words(q.causes)
            )
        )
    if out is not None:
        cut = any(len(c.cause) > CAUSE_WIDTH for q in failing[:lowest] for c in q.causes)
        whole = ": the causes cut short above (…) are whole there" if cut else ""
        lines.append(terminal(f"Class report: {out / 'report.html'} (and report.csv){whole}"))
    return "\n".join(lines)


def _sources(solutions: Path | None) -> dict:
    """``{assignment_id: (notebook name, source)}`` of ``solutions/<id>/*.ipynb``, as
    ``batch.load_sources`` reads them (not imported from there: batch imports the grader, torch
    included, three seconds of a report's few)."""
    found = {}
    for folder in sorted(p for p in (solutions.iterdir() if solutions and solutions.is_dir() else []) if p.is_dir()):
        if notebooks := sorted(folder.glob("*.ipynb")):
            found[folder.name] = (notebooks[0].name, nbformat.read(notebooks[0], as_version=4))
    return found


def report_from_results(results: Iterable, out: Path, solutions: Path | None = None) -> Summary:
    """Write the report of a grade run's in-memory results (``grade_one.Result``) into ``out``;
    ``solutions``: the nbgrader source folder, whose hidden tests the examples are scrubbed of."""
    return write_report(rows_from_results(results), out, _sources(solutions))


def report_from_gradebook(db_url: str | None, out: Path, solutions: Path | None = None) -> Summary:
    """Write the report of everything graded so far in nbgrader's gradebook at ``db_url``
    (default :func:`default_db_url` of ``out``) into ``out``.

    Raises:
        FileNotFoundError: ``db_url`` names an SQLite file that does not exist (nbgrader would
            create an empty gradebook there; this only reads).
    """
    db_url = db_url or default_db_url(out)
    if db_url.startswith("sqlite:///") and not Path(db_url.removeprefix("sqlite:///")).is_file():
        raise FileNotFoundError(f"no gradebook at {db_url}: grade first, or give --db URL")
    return write_report(rows_from_gradebook(db_url), out, _sources(solutions), late_from_gradebook(db_url))


def after_grade(out: Path, db_url: str | None = None, solutions: Path | None = None) -> str:
    """What ``grade`` prints when it ends: the report of its gradebook (``db_url``, default
    ``OUT/gradebook.db``) written into ``out``, and :func:`terminal_summary`'s lines; "" when the
    run left no gradebook. A report that cannot be written says so in one line and costs no grade."""
    try:
        summary = report_from_gradebook(db_url, out, solutions)
    except FileNotFoundError:
        return ""
    except Exception as error:  # noqa: BLE001 -- the grades are stored already; the report is extra
        return f"\nThe class report could not be written: {terminal(str(error))[:200]}\n"
    return "\n" + terminal_summary(summary, out) + "\n"
