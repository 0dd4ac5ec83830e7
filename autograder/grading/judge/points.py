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
    docstring), else ``(0.0, why)`` with ``why`` never empty.

    Args:
        points: what the source gives the question.
        cell_run: the cell's ``runner.CellRun`` (``finished``, ``error``, ``records``), as it crossed back.
        stopped: why the grader stopped or left out this cell (a status), or None.
        solution: the records the solution's run of this cell made (``grade_one.solution_records``).
    """
    if stopped:
        return 0.0, f"stopped: {stopped}"
    if cell_run is None or not cell_run.finished:
        return 0.0, NOT_RUN
    if cell_run.error is not None:
        name, message = cell_run.error
        if name == "CheckFailed" and message:  # a check judged in the learner's process: the grader's
            judged = verdict(cell_run.records, solution)  # verdict on the same records carries the cause key
            return 0.0, judged if judged == message else message
        return 0.0, raised(name, message)
    if not solution:
        return 0.0, NO_REFERENCE
    message = verdict(cell_run.records, solution)
    if message:
        return 0.0, message
    foreign = sorted({name for name, _ in set(keyed(cell_run.records)) - set(keyed(solution))})
    if foreign:
        return 0.0, FOREIGN_RECORDS.format(names=", ".join(repr(name[:60]) for name in foreign[:5]))
    return float(points), ""
