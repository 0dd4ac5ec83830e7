"""``check.summary()``: where the learner stands in the exercise open in this kernel, from the checks
that ran in it (nothing is run again).

Importing :mod:`autograder.check` (every exercise's set-up cell does) calls :func:`watch`, which
records the outcome of every cell the kernel runs from then on: its source, and whether it raised
(the first line of the message) or else whether its checks printed OK (:func:`judged`): a question
passes here only on its checks' own OKs, not because its cell ended without an error.
:func:`summary` finds the exercise those cells belong to, by the sources of its cells (the check
cells are locked, so they read as released), and says for each
question *passed*, *not answered yet* (its check met the release's ``raise NotImplementedError()``),
*failed* (the first line of its cause) or *not run yet*, then that graders also
run hidden tests. Under the class grader (``report_to`` set) it prints nothing: the feedback page
gives the verdict.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from ..compare.causes import NOT_ANSWERED, cause_of
from ..lessons import COURSE_ROOT, LEARNER_FOLDER

__all__ = [
    "Question",
    "questions",
    "title",
    "summarize",
    "summary",
    "points_said",
    "watch",
    "judged",
    "NO_CHECK_RAN",
    "ONLY_WHEN_GRADED",
    "NOT_ANSWERED_YET",
]

# The last outcome of each cell source run in this kernel: (source stripped) -> "" (every check it
# made passed, and at least one did) or why not: the first line of what it raised, or that no check
# reported a result (a pass rests on the checks' own OKs, never on a cell merely ending quietly).
_outcomes: dict[str, str] = {}
_watching = False
_judged = {"passed": 0, "withheld": 0}  # the running cell's checks that printed OK / are checked when graded
_cell_facts: dict = {}  # what the running cell's checks that printed OK stated (check.judging.passed_fact)

NO_CHECK_RAN = "no check reported a result (nothing printed OK): run the cell again as released"
ONLY_WHEN_GRADED = "checked when graded (its reference is not in the release)"
NOT_ANSWERED_YET = "not answered yet"  # the verdict of a question whose answer is still the release's stub

HIDDEN_TESTS = (
    "These are the checks you can see, as they last ran in this kernel. Graders also run hidden tests "
    "(the same questions at other inputs), so a question that passes here can still lose points."
)


def _first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    first = text[0] if text else ""
    if type(error).__name__ == "CheckFailed":
        return first
    return f"{type(error).__name__}: {first}" if first else type(error).__name__


def judged(withheld: bool, fact: dict | None = None) -> None:
    """A check of the running cell passed (``withheld``: its reference is withheld, so it printed
    "checked when graded"); called by ``check`` after it printed that line, with what its OK line stated
    (``fact``), which the cell's later checks weigh their causes on."""
    _judged["withheld" if withheld else "passed"] += 1
    _cell_facts.update(fact or {})


def cell_passed() -> dict:
    """What the running cell's checks that printed OK stated so far (a copy)."""
    return dict(_cell_facts)


# what was warned during the running cell's check.calls since its last check (``check.call`` fills it; the records
# checked after them carry it, so a failure can say what the run showed: a broadcast mse_loss warns about the sizes)
warned: list[str] = []


def clear_cell() -> None:
    """No check of the running cell has passed yet, and nothing was warned."""
    _judged.update(passed=0, withheld=0)
    _cell_facts.clear()
    warned.clear()


def _start(*_) -> None:
    """IPython's ``pre_run_cell`` callback: a new cell."""
    clear_cell()


def _record(result) -> None:
    """IPython's ``post_run_cell`` callback: remember how this cell's source last ended."""
    source = (getattr(result.info, "raw_cell", None) or "").strip()
    if source:
        error = result.error_in_exec or result.error_before_exec
        if error is not None:
            _outcomes[source] = _first_line(error) or "it raised an error"
        elif _judged["passed"]:
            _outcomes[source] = ""
        else:
            _outcomes[source] = ONLY_WHEN_GRADED if _judged["withheld"] else NO_CHECK_RAN


def watch() -> None:
    """Record every cell this IPython kernel runs from now on (once; nothing outside IPython)."""
    global _watching
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover (IPython comes with the course)
        return
    shell = get_ipython()
    if shell is not None and not _watching:
        shell.events.register("pre_run_cell", _start)
        shell.events.register("post_run_cell", _record)
        _watching = True


@dataclass(frozen=True)
class Question:
    """One graded question of an exercise: its number, points and the source of its check cell."""

    number: int
    points: float
    check: str


def _cells(path: Path) -> list[dict]:
    try:
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    except (OSError, ValueError, KeyError, TypeError):
        return []
    for cell in cells:
        source = cell.get("source", "")
        cell["source"] = "".join(source) if isinstance(source, list) else str(source)
    return cells


def questions(path: Path) -> list[Question]:
    """The questions of the exercise notebook at ``path``: its nbgrader check cells (``qN_check``)."""
    found = []
    for cell in _cells(path):
        meta = cell.get("metadata", {}).get("nbgrader", {})
        number = re.fullmatch(r"q(\d+)_check", str(meta.get("grade_id", "")))
        if meta.get("grade") and number:
            found.append(Question(int(number[1]), float(meta.get("points") or 0), cell["source"].strip()))
    return found


def _candidates() -> list[Path]:
    """Notebooks the kernel may be running: its own (Jupyter's server names it), those of the
    kernel's folder (where Jupyter starts it: the notebook's, also under nbconvert and on a hub,
    where the course's package is installed away from any course folder), the learner's copies,
    the release and the sources (which carry the hidden tests)."""
    own = [Path(p) for p in (os.environ.get("JPY_SESSION_NAME", ""),) if p.endswith(".ipynb")]
    here = sorted(Path.cwd().glob("*.ipynb"))
    folders = (LEARNER_FOLDER / "exercises", COURSE_ROOT / "exercises", COURSE_ROOT / "solutions")
    return own + here + [path for folder in folders for path in sorted(folder.glob("*/*.ipynb"))]


def _ran_here(path: Path) -> int:
    """How many of the notebook's code cells (other than this summary) ran in this kernel as they read."""
    return sum(
        1
        for cell in _cells(path)
        if cell.get("cell_type") == "code"
        and cell["source"].strip() in _outcomes
        and "check.summary()" not in cell["source"]
    )


def points_said(points: float) -> str:
    """``1 point``, ``2 points``, ``0.5 points``."""
    return f"{points:g} point{'' if points == 1 else 's'}"


def summarize(title: str, asked: list[Question], outcomes: dict[str, str]) -> str:
    """The summary's text: one line per question, passed / not answered yet / failed (the cause's
    first line) / not run yet."""
    lines, passed, points, total = [], 0, 0.0, 0.0
    for question in asked:
        total += question.points
        outcome = outcomes.get(question.check)
        if outcome is None:
            verdict = "not run yet"
        elif outcome == "":
            verdict, passed, points = "passed", passed + 1, points + question.points
        elif outcome == ONLY_WHEN_GRADED:
            verdict = outcome
        elif cause_of(outcome) == NOT_ANSWERED:  # a blank answer is not a wrong one
            verdict = NOT_ANSWERED_YET
        else:
            verdict = f"failed: {outcome}"
        lines.append(f"  Question {question.number} ({points_said(question.points)}): {verdict}")
    head = f"{title}: {passed} of {len(asked)} questions pass here ({points:g} of {points_said(total)})."
    return "\n".join([head, *lines, HIDDEN_TESTS])


def summary() -> None:
    """Print where the learner stands in the exercise this kernel runs (see the module's docstring)."""
    from . import _hook

    if _hook is not None:  # the class grader's process: its feedback page gives the verdict
        return
    ranked = sorted(((_ran_here(path), -i, path) for i, path in enumerate(_candidates())), reverse=True)
    if not ranked or ranked[0][0] == 0:
        print("No cell of an exercise has run in this kernel yet: run the notebook from the top, then this cell.")
        print(HIDDEN_TESTS)
        return
    path = ranked[0][2]
    print(summarize(title(path), questions(path), _outcomes))


def title(path: Path) -> str:
    """The exercise's heading ("Exercise 1: the graph is built as the code runs"), else its file's name."""
    for cell in _cells(path):
        heading = re.match(r"#\s+(.+)", cell["source"]) if cell.get("cell_type") == "markdown" else None
        if heading:
            return heading[1].strip()
    return path.stem
