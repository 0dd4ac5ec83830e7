"""The service's page as HTML, from the queue's rows: a learner's own attempts of each assignment, or
everyone's for an instructor. Pure functions (the web handlers in ``web`` only choose the rows).

Everything from a submission (ids, statuses, messages, a refused folder's name) is escaped text;
the page has no script and loads nothing (a ``Content-Security-Policy`` says so), and while one
of the attempts it shows is waiting it reloads itself every few seconds (``<meta refresh>``).
"""

from __future__ import annotations

import html
from collections import defaultdict
from datetime import UTC, datetime

from ..names import without_controls
from . import attempts as rules_of_attempts
from . import held
from .queue import QUEUED, Attempt
from .settings import Rules

__all__ = ["page", "CSP", "REFRESH"]

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'none'; frame-ancestors 'self'"
REFRESH = 3  # seconds between reloads while an attempt shown is waiting

_STYLE = """
body{font-family:system-ui,sans-serif;max-width:60em;margin:1.5em auto;padding:0 1em;line-height:1.45}
table{border-collapse:collapse;width:100%;margin:.5em 0 1.5em}
th,td{border-bottom:1px solid #ddd;padding:.3em .5em;text-align:left;vertical-align:top}
.waiting{color:#8a5a00}.graded{color:#14532d}.not{color:#7f1d1d}.small{font-size:.9em;color:#444}
"""


def _e(text) -> str:
    return html.escape(str(text), quote=True)


def _when(seconds: float | None) -> str:
    if seconds is None:
        return ""
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _state(attempt: Attempt, positions: dict[str, int], waiting: int) -> str:
    if attempt.state == QUEUED:
        place = positions.get(attempt.id)
        return f'<span class="waiting">waiting: place {place} of {waiting} in the queue</span>'
    if attempt.outcome == "graded":
        score = f"{attempt.score or 0:g} / {attempt.max_score or 0:g}"
        if held.is_held(attempt):
            score += " so far (the rest after the due date)"
        if attempt.late_penalty:
            score += f" (late: -{attempt.late_penalty:g})"
        status = "" if attempt.status == "graded" else f" <span class=small>{_e(attempt.status)}</span>"
        return f'<span class="graded">{_e(score)}</span>{status}'
    return f'<span class="not">{_e(attempt.outcome)}</span><br><span class=small>{_e(attempt.reason)}</span>'


def _causes(attempt: Attempt) -> str:
    lines = []
    for q in attempt.questions:
        if q.get("held"):
            lines.append(f"<li><b>{_e(q['grade_id'])}</b>: held until the due date (hidden tests)</li>")
        elif q.get("score", 0) < q.get("points", 0):
            cause = f" <code>[{_e(q['cause'])}]</code>" if q.get("cause") else ""
            lines.append(f"<li><b>{_e(q['grade_id'])}</b>: {_e(q.get('message', ''))}{cause}</li>")
    return f"<ul>{''.join(lines)}</ul>" if lines else ""


def _assignment(name: str, rows: list[Attempt], rules: Rules, extra: int, positions, waiting, base: str) -> str:
    policy = rules.of(name)
    used = sum(a.counted for a in rows)
    left = rules_of_attempts.left(policy, extra, used)
    allowed = "unlimited attempts" if left is None else f"{used} of {policy.limit + extra} attempts used, {left} left"
    rule = f"the {policy.counts} graded attempt counts"
    if policy.cooldown:
        rule += f"; at least {policy.cooldown:g} s between graded attempts"
    if policy.hold_hidden:
        rule += "; hidden tests' results are shown after the due date"
    body = []
    for a in rows:
        number = str(a.number) if a.number else "-"
        link = f'<a href="{_e(base)}feedback/{_e(a.id)}">feedback page</a>' if a.outcome == "graded" else ""
        body.append(
            f"<tr><td>{number}</td><td>{_e(_when(a.submitted_at))}</td>"
            f"<td>{_state(a, positions, waiting)}</td><td>{_causes(a)}</td><td>{link}</td></tr>"
        )
    return (
        f"<h2>{_e(name)}</h2><p class=small>{_e(allowed)}; {_e(rule)}.</p>"
        "<table><tr><th>attempt</th><th>handed in</th><th>result</th><th>what went wrong</th><th></th></tr>"
        + "".join(body)
        + "</table>"
    )


def page(
    viewer: str, rows: list[Attempt], queued: list[Attempt], rules: Rules, extras: dict, course_id: str,
    base: str, instructor: bool = False, hidden: dict | None = None,
) -> str:  # fmt: skip
    """The page for ``viewer``: ``rows`` are the attempts shown (the viewer's own, or everyone's for
    an ``instructor``), ``queued`` the whole queue in fair order (for places in it), ``extras``
    ``{(student, assignment): extra attempts}``, ``base`` the service's URL prefix, ``hidden``
    ``{assignment: grade ids with hidden tests}``: a learner's held attempts show without them
    (``held.shown``)."""
    if not instructor:
        rows = [held.shown(a, (hidden or {}).get(a.assignment, set())) for a in rows]
    positions = {a.id: i for i, a in enumerate(queued, start=1)}
    by_learner: dict[str, dict[str, list[Attempt]]] = defaultdict(lambda: defaultdict(list))
    refused = []
    for a in rows:
        if a.outcome == "refused":
            refused.append(a)
        else:
            by_learner[a.student][a.assignment].append(a)
    sections = []
    for student in sorted(by_learner):
        if instructor:
            sections.append(f'<h2 class="learner">{_e(student)}</h2>')
        for name in sorted(by_learner[student]):
            extra = extras.get((student, name), 0)
            sections.append(_assignment(name, by_learner[student][name], rules, extra, positions, len(queued), base))
    if not by_learner:
        sections.append("<p>No submissions yet. Submit from the Assignments tab (or <code>nbgrader submit</code>).</p>")
    if refused and instructor:
        names = [(without_controls(a.inbound)[:200], a.reason) for a in refused]
        items = "".join(f"<li><code>{_e(name)}</code>: {_e(reason)}</li>" for name, reason in names)
        sections.append(f"<h2>Refused folders in the exchange</h2><ul>{items}</ul>")
    waiting_here = any(a.state == QUEUED for a in rows)
    refresh = f'<meta http-equiv="refresh" content="{REFRESH}">' if waiting_here else ""
    who = f"{_e(viewer)} (instructor: every learner)" if instructor else _e(viewer)
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">{refresh}'
        f'<meta http-equiv="Content-Security-Policy" content="{html.escape(CSP, quote=False)}">'
        f"<title>Grades: {_e(course_id)}</title><style>{_STYLE}</style></head><body>"
        f"<h1>Grades: {_e(course_id)}</h1><p class=small>Signed in as {who}. "
        f"{len(queued)} submission(s) waiting to be graded.</p>" + "".join(sections) + "</body></html>\n"
    )
