"""The class report as one HTML page: self-contained, offline and safe to open.

The page loads nothing (no scripts at all, no fonts, no stylesheets or images from anywhere: its
Content-Security-Policy allows only its inline style and ``data:`` images), reads at 1280 px and
on a phone (tables scroll sideways inside their box), and escapes every text that comes from a
submission or the gradebook (student and assignment ids, messages). Each plot is a PNG made with
matplotlib (no pyplot: no GUI backend, nothing global) with a text alternative saying what it shows;
the tables below it hold the same numbers.
"""

from __future__ import annotations

import base64
import io
from collections import Counter
from html import escape

from matplotlib import rc_context
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from .summary import QuestionSummary, Summary, each, shortened

__all__ = ["report_html", "CSP"]

CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"
_TOP = 5  # causes plotted per assignment
_STUDENTS_SHOWN = 12  # students listed inline per cause; the rest behind "more"

_STYLE = """
body { font: 15px/1.45 system-ui, sans-serif; margin: 0 auto; padding: 0 12px 40px; max-width: 1200px; color: #1b1b1b; }
p, figcaption, h1, h2, h3 { overflow-wrap: anywhere; }
h1 { font-size: 1.6em; } h2 { margin-top: 2em; border-bottom: 1px solid #ccc; } h3 { margin-bottom: .3em; }
.scroll { overflow-x: auto; } table { border-collapse: collapse; width: 100%; margin: .4em 0 1em; }
th, td { text-align: left; vertical-align: top; padding: 4px 8px; border-bottom: 1px solid #e3e3e3; }
th { background: #f4f4f4; } td:first-child { width: 26em; max-width: 40vw; }
td.n { text-align: right; white-space: nowrap; } .gist { font-size: .85em; color: #555; overflow-wrap: anywhere; }
code { font-size: .92em; overflow-wrap: anywhere; } pre.example { white-space: pre-wrap; overflow-wrap: anywhere;
  margin: 0; font-size: .85em; max-height: 14em; overflow-y: auto; background: #fafafa; padding: 4px; }
img { max-width: 100%; height: auto; } figure { margin: .5em 0; } figcaption { font-size: .9em; color: #444; }
.low { color: #a40000; font-weight: 600; }
nav { display: flex; flex-wrap: wrap; gap: .2em .9em; } nav a { white-space: nowrap; }
@media (max-width: 640px) {
  body { font-size: 14px; padding: 0 6px 30px; } table, tbody, tr, td { display: block; width: auto; max-width: none; }
  tr:first-child { display: none; } tr { border-bottom: 1px solid #bbb; padding: 4px 0; }
  td:first-child { width: auto; max-width: none; }
  td, td.n { border: 0; padding: 1px 2px; text-align: left; }
  td::before { content: attr(data-label) ": "; color: #666; }
}
"""


def _e(text) -> str:
    return escape(str(text), quote=True)


def _cause(label: str) -> str:
    """A cause as shown: a key in code type, a message group (quoted) as text."""
    return _e(label) if label.startswith("“") else f"<code>{_e(label)}</code>"


def _students(names: list[str]) -> str:
    shown = ", ".join(_e(n) for n in names[:_STUDENTS_SHOWN])
    if len(names) <= _STUDENTS_SHOWN:
        return shown
    rest = ", ".join(_e(n) for n in names[_STUDENTS_SHOWN:])
    return f"{shown} <details><summary>{len(names) - _STUDENTS_SHOWN} more</summary>{rest}</details>"


def _distribution(q: QuestionSummary) -> str:
    """``"2 pts: 3, 0 pts: 1"``: how many submissions got each score, highest first."""
    counts = Counter(q.scores)
    return ", ".join(f"{score:g} pts: {n}" for score, n in sorted(counts.items(), reverse=True))


def _png(fig: Figure) -> str:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=80)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def _short(text: str, n: int = 48) -> str:
    return shortened(text, n)


def _assignment_plot(questions: list[QuestionSummary]) -> tuple[str, str]:
    """(PNG as base64, text alternative): per question, how many submissions got full, partial and
    no points (stacked bars); beside it, the assignment's most frequent causes. A cause's label may
    quote a learner's message (``$\\frac{a}$``): matplotlib gets every text as text (no mathtext, no
    TeX), and a plot that still cannot be drawn is left out, its text alternative kept."""
    with rc_context({"text.parse_math": False, "text.usetex": False}):
        try:
            return _drawn(questions)
        except Exception as error:  # noqa: BLE001 -- the report goes on without this picture
            return "", f"(no plot: {type(error).__name__}) " + _drawn(questions, draw=False)[1]


def _drawn(questions: list[QuestionSummary], draw: bool = True) -> tuple[str, str]:
    counts = Counter()
    for q in questions:
        for c in q.causes:
            counts[c.cause] += c.count
    # most frequent first, ties alphabetical (as the report orders causes), not in the order met
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    top = ranked[:_TOP]
    alt = "Scores per question: " + "; ".join(
        f"{q.question}: {q.passed} full, {q.submissions - q.passed - sum(s <= 0 for s in q.scores)} some, "
        f"{sum(s <= 0 for s in q.scores)} no points"
        for q in questions
    )
    alt += f". {_top_title(ranked).capitalize()}: " + ("; ".join(f"{c} ({n})" for c, n in top) if top else "none") + "."
    if not draw:
        return "", alt
    rows = max(len(questions), len(top), 3)
    height = 0.4 * rows + 1.4  # inches: a bar per row, then the axis labels and the legend below
    fig = Figure(figsize=(12, height))
    # fixed margins (no tight_layout: it draws the figure once more, a third of the page's time);
    # the right-hand axes leave room for cause labels of _short's length at 8 pt
    bottom, top_margin = 1.0 / height, 0.35 / height
    left = fig.add_axes((0.08, bottom, 0.3, 1 - bottom - top_margin))
    right = fig.add_axes((0.65, bottom, 0.33, 1 - bottom - top_margin))
    names = [q.question for q in questions][::-1]
    full = [q.passed for q in questions][::-1]
    none = [sum(s <= 0 for s in q.scores) for q in questions][::-1]
    partial = [q.submissions - f - z for q, f, z in zip(questions[::-1], full, none)]
    left.barh(names, full, color="#2e7d32", label="full points")
    left.barh(names, partial, left=full, color="#f9a825", label="some points")
    left.barh(names, none, left=[f + p for f, p in zip(full, partial)], color="#c62828", label="no points")
    left.set_xlabel("submissions")
    left.set_title("scores per question")
    left.legend(loc="upper center", bbox_to_anchor=(0.5, -0.45 / (height - 1.35)), ncol=3, fontsize=8, frameon=False)
    left.xaxis.set_major_locator(MaxNLocator(integer=True))
    if top:
        right.barh([_short(c) for c, _ in top][::-1], [n for _, n in top][::-1], color="#5c6bc0")
        right.set_xlabel("failed questions")
        right.xaxis.set_major_locator(MaxNLocator(integer=True))
    right.set_title(_top_title(ranked) if top else "no failures")
    right.tick_params(axis="y", labelsize=8)
    return _png(fig), alt


def _top_title(ranked: list[tuple[str, int]]) -> str:
    """What the plotted causes (``ranked[:_TOP]``) are, honest when causes tie: ``top 5 causes``;
    ``3 causes, each once`` or ``5 of 8 causes, 2 each`` when all tie; ``top 5 of 8 causes (+2
    more tied, 1 each)`` when the cut at ``_TOP`` falls among causes of one count (ties are ranked
    alphabetically), so that no reader takes the ones shown for more frequent than those left out."""
    if len(ranked) <= 1:
        return f"{len(ranked)} cause" if ranked else "no causes"
    counts = [n for _, n in ranked]
    if len(set(counts)) == 1:
        return f"{min(len(ranked), _TOP)}{f' of {len(ranked)}' if len(ranked) > _TOP else ''} causes, {each(counts[0])}"
    if len(ranked) <= _TOP:
        return f"top {len(ranked)} causes"
    last = counts[_TOP - 1]
    left_out = counts[_TOP:].count(last)
    return f"top {_TOP} of {len(ranked)} causes" + (f" (+{left_out} more tied, {last} each)" if left_out else "")


def _question(q: QuestionSummary) -> str:
    rate = f"{q.pass_rate:.0%}"
    low = ' class="low"' if q.pass_rate < 0.5 else ""
    parts = [
        f'<h3 id="{_e(q.assignment_id)}-{_e(q.question)}">{_e(q.question)}</h3>',
        f"<p>{q.points:g} points. Passed by <span{low}>{q.passed} of {q.submissions} ({rate})</span>; "
        f"scores: {_distribution(q)}.</p>",
    ]
    if q.causes:
        rows = [
            [_cause(c.cause), f"#{c.count}", _students(c.students), f'<pre class="example">{_e(c.example)}</pre>']
            for c in q.causes
        ]
        parts.append(_table(["cause", "count", "students", "example message"], rows))
    return "\n".join(parts)


def _table(header: list[str], rows: list[list[str]]) -> str:
    """A table of ``rows`` (cells already HTML; a cell starting with ``#`` is a number, right
    aligned). On a phone each row becomes a block of labelled lines (``data-label``), so that
    nothing needs scrolling sideways."""
    lines = ['<div class="scroll"><table><tr>' + "".join(f"<th>{_e(h)}</th>" for h in header) + "</tr>"]
    for row in rows:
        cells = []
        for label, cell in zip(header, row):
            number = ' class="n"' if cell.startswith("#") else ""
            cells.append(f'<td data-label="{_e(label)}"{number}>{cell.removeprefix("#")}</td>')
        lines.append("<tr>" + "".join(cells) + "</tr>")
    return "\n".join([*lines, "</table></div>"])


def _places(where: dict[tuple[str, str], int]) -> str:
    """``ex01_graph: q1_check, q2_check (2); ex04_accumulation: q3_check``, each a link to its question."""
    by_assignment: dict[str, list[str]] = {}
    for (a, q), n in sorted(where.items()):
        link = f'<a href="#{_e(a)}-{_e(q)}">{_e(q)}</a>' + (f" ({n})" if n > 1 else "")
        by_assignment.setdefault(a, []).append(link)
    return "; ".join(f"{_e(a)}: {', '.join(links)}" for a, links in by_assignment.items())


def _course_causes(summary: Summary) -> str:
    """Each cause, most failures first: how many failures and students, an example's first line
    (what the learners were told), and the questions it shows up in."""
    if not summary.causes:
        return "<p>No failures.</p>"
    gist: dict[str, str] = {}  # the first question's example of each cause
    for c in (c for q in summary.questions for c in q.causes):
        gist.setdefault(c.cause, _short(c.example.split("\n", 1)[0], 200))
    rows = [
        [
            f'{_cause(cause)}<div class="gist">{_e(gist.get(cause, ""))}</div>',
            f"#{sum(where.values())}",
            f"#{len(summary.cause_students(cause))}",
            _places(where),
        ]
        for cause, where in summary.causes.items()
    ]
    return _table(["cause", "failures", "students", "questions"], rows)


def _students_table(summary: Summary) -> str:
    rows = []
    for student in summary.all_students:
        hit = summary.students.get(student, {})
        text = "; ".join(
            f"{_cause(c)}: " + ", ".join(f"{_e(a)} {_e(q)}" for a, q in where)
            for c, where in sorted(hit.items(), key=lambda item: (-len(item[1]), item[0]))
        )
        text = text or "none: every question passed"
        late = summary.late.get(student)
        if late:  # a passed question of a late submission still scores after the penalty
            text += "; late: " + ", ".join(f"{_e(a)} {_e(words)}" for a, words in late)
        rows.append([_e(student), text])
    return _table(["student", "causes hit (where)"], rows)


def report_html(summary: Summary) -> str:
    """The whole page for ``summary`` (see the module docstring)."""
    assignments: dict[str, list[QuestionSummary]] = {}
    for q in summary.questions:
        assignments.setdefault(q.assignment_id, []).append(q)
    body = [
        "<h1>What the class got wrong</h1>",
        f"<p>{len(summary.all_students)} students, {len(assignments)} assignments, "
        f"{sum(q.submissions for q in summary.questions)} graded questions. Causes are counted per failed "
        "question; a cause in <code>code type</code> is a diagnosis's key, one in quotes a message's first "
        "line with its numbers and names taken out.</p>",
        '<nav><a href="#causes">causes across the course</a>'
        + "".join(f'<a href="#{_e(a)}">{_e(a)}</a>' for a in assignments)
        + '<a href="#students">students</a></nav>',
        '<h2 id="causes">Causes across the course</h2>',
        _course_causes(summary),
    ]
    for assignment, questions in assignments.items():
        png, alt = _assignment_plot(questions)
        picture = f'<img src="data:image/png;base64,{png}" alt="{_e(alt)}">' if png else ""
        body += [
            f'<h2 id="{_e(assignment)}">{_e(assignment)}</h2>',
            f"<figure>{picture}",
            f"<figcaption>{_e(alt)}</figcaption></figure>",
            *map(_question, questions),
        ]
    body += ['<h2 id="students">Students</h2>', _students_table(summary)]
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>Class report</title><style>{_STYLE}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n"
    )
