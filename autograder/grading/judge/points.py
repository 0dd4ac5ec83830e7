"""A question's points, given only on positive evidence: the one place any run decides them.

A test cell earns its points only when the run shows it passed: the cell ran to its end, raised
nothing, and every check the solution's run of that cell made (visible and hidden) has the learner's
record of the same name and occurrence, with a received value the grader judges right
(``verdict``). Nothing is passed for what is missing: no message, no error seen, no record. So a
cell stopped or never run, anything raised (any ``BaseException``, however it is named and whatever
its message is), a check that did not report (patched, skipped, returned early), a record this cell
does not make (a forged one, another cell's), and a question the references hold no record for each
score 0, with a message that says which. The class run, ``grade-one`` (both results formats), shards
(each part is a class run) and the hosted graders all score through :func:`question_points`.
"""

from __future__ import annotations

from ...check.raised import shown_name
from ...compare.causes import Diagnosed, error_cause, key
from .verdict import keyed, verdict

__all__ = ["question_points", "NO_REFERENCE", "NOT_RUN", "FOREIGN_RECORDS", "raised"]

NOT_RUN = "stopped: the test cell did not run to its end"
NO_REFERENCE = (
    "not graded: the references hold no record of this question's checks, so nothing shows it passed "
    "(an instructor's error: make the references again)"
)
FOREIGN_RECORDS = (
    "the test cell reported checks it does not make ({names}): records that are not this question's own earn no points"
)


def raised(name: str, message: str) -> str:
    """What a test cell that raised says: the error's name as data (:func:`~autograder.check.raised.shown_name`,
    ``<unnamed exception>`` for an empty one), then its message when it has one."""
    return f"{shown_name(name)}: {message}" if message.strip() else shown_name(name)


def question_points(points: float, cell_run, stopped: str | None, solution: list) -> tuple[float, str]:
    """``(score, message)`` of one test cell: ``(points, "")`` only on positive evidence (module
    docstring), else ``(0.0, why)`` with ``why`` never empty. ``why`` is a ``compare.causes.Diagnosed``
    whose ``cause`` the grader filled from what it knows itself: a stop it made (``stopped.<why>``),
    its own verdict's diagnosis, or, for an error raised in the learner's code, only a key under
    ``error.`` (``causes.error_cause``); a learner's text never names a stop, a wrong value or an
    unanswered question.

    Args:
        points: what the source gives the question.
        cell_run: the cell's ``runner.CellRun`` (``finished``, ``error``, ``records``), as it crossed back.
        stopped: why the grader stopped or left out this cell (a status), or None.
        solution: the records the solution's run of this cell made (``grade_one.solution_records``).
    """
    if stopped:
        return 0.0, Diagnosed(f"stopped: {stopped}", key("stopped", stopped.split(" in ")[0]))
    if cell_run is None or not cell_run.finished:
        return 0.0, Diagnosed(NOT_RUN, key("stopped", NOT_RUN.removeprefix("stopped: ")))
    if cell_run.error is not None:
        name, message = cell_run.error
        if name == "CheckFailed" and message:  # a check judged in the learner's process: the grader's
            judged = verdict(cell_run.records, solution)  # verdict on the same records carries the cause key
            return 0.0, judged if judged == message else Diagnosed(message, error_cause(message))
        said = raised(name, message)
        return 0.0, Diagnosed(said, error_cause(said))
    if not solution:
        return 0.0, Diagnosed(NO_REFERENCE)
    message = verdict(cell_run.records, solution)
    if message:
        return 0.0, message if isinstance(message, Diagnosed) else Diagnosed(message)
    foreign = sorted({name for name, _ in set(keyed(cell_run.records)) - set(keyed(solution))})
    if foreign:
        return 0.0, Diagnosed(FOREIGN_RECORDS.format(names=", ".join(repr(name[:60]) for name in foreign[:5])))
    return float(points), ""
