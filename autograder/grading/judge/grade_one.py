"""Grade one submission in a sandbox, without touching the file.

A test cell earns its points (from the source) only on positive evidence (``points``): it ran to
the end and raised nothing (stderr output, such as PyTorch warnings, does not matter), and every
check the solution's run of that cell made has a learner record of the same name and occurrence
whose received value the grader judges right against the solution's expected value (``verdict``),
and it made no other. The learner's process never holds the references: test cells reach it with
their REFERENCE regions withheld (``references.withhold``).
The solution's records come from running the source notebook as written (``solution_records``),
once per assignment, in a submission process of its own.
"""

from __future__ import annotations

import functools
import os
import re
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from ...compare.causes import NOT_ANSWERED
from .. import status
from ..intake.bounds import MAX_NOTEBOOK_BYTES, shape_problem
from ..names import visible as shown_plain
from ..sandbox.container import Sandbox, SandboxError
from ..sandbox.limits import Limits
from ..sandbox.runner import run_cells
from .assemble import assemble, grade_id, is_test, questions, visible_source, withheld_here
from .points import question_points
from .references import withhold
from .stubs import release_answers, unanswered
from .verdict import keyed

__all__ = [
    "QuestionResult",
    "Result",
    "Prepared",
    "SolutionFails",
    "unscored",
    "solution_records",
    "prepare_notebook",
    "run_prepared",
    "judge_run",
    "grade_notebook",
    "read_submission",
]

_QUOTED_CAUSE = re.compile(r"(?m)^(\s*)\[cause:")
MAX_MESSAGE = 2_000  # characters of a question's message kept (page, gradebook comment)


class SolutionFails(RuntimeError):
    """The instructor's solution fails its own tests (an instructor error)."""


@dataclass
class QuestionResult:
    """One test cell's outcome: ``score``/``points`` (float) and, when it failed, ``message``:
    the exception's type and message, or what differed from the solution (never test source),
    and ``cause``, its cause key (``autograder.compare.causes``; "" when it passed or nothing names one)."""

    grade_id: str
    points: float
    score: float = 0.0
    message: str = ""
    cause: str = ""


@dataclass
class Result:
    """A graded submission. ``status`` is ``"graded"`` or says why grading stopped early
    (``"timeout in q2_check"``, ``"crashed (signal 11) in q1_answer"``, ``"unreadable: ..."``,
    ``"no notebook"``); questions after such a stop score 0. ``late_penalty``: the points the
    gradebook's late-submission plugin takes off and ``seconds_late`` how late it came (both set
    by the batch once the store recorded it; ``score`` is before the penalty)."""

    student_id: str
    assignment_id: str
    status: str
    questions: list[QuestionResult] = field(default_factory=list)
    notebook: nbformat.NotebookNode | None = None
    late_penalty: float = 0.0
    seconds_late: float = 0.0

    @property
    def score(self) -> float:
        return sum(q.score for q in self.questions)

    @property
    def max_score(self) -> float:
        return sum(q.points for q in self.questions)

    def failure(self, question: QuestionResult) -> str:
        """What went wrong with ``question`` for a page or a platform to say: its message; for a
        question short of its points with none (nothing of the submission ran: no notebook, an
        unreadable file, a link), "not graded: " and the status; "" when it earned its points."""
        if question.message:
            return question.message
        return "" if question.score >= question.points else f"not graded: {self.status}"


def unscored(source: nbformat.NotebookNode, student_id: str, assignment_id: str, why: str) -> Result:
    """A result for ``source``'s questions, each at 0 of its points, with status ``why``: before
    anything ran, or when nothing will (no notebook, a link, a solution that fails its tests)."""
    return Result(student_id, assignment_id, why, [QuestionResult(q.grade_id, q.points) for q in questions(source)])


def _code_cells(nb: nbformat.NotebookNode) -> list:
    return [c for c in nb.cells if c.cell_type == "code"]


def solution_records(source: nbformat.NotebookNode, sandbox: Sandbox, limits: Limits) -> dict[str, list]:
    """The records each test cell's checks make when the source notebook (solutions and
    references included) runs: ``{test grade_id: [Checked, ...]}``. A hidden test's record has
    ``options["hidden"]`` True (its check is not made when the cells run without their hidden
    regions), so that its failure is reported without its inputs (``verdict``).

    Raises:
        SolutionFails: a test cell fails on the instructor's own solution.
        SandboxError: the sandbox could not run it at all (the message is bwrap's).
    """
    cells = _code_cells(source)
    run = run_cells([c.source for c in cells], sandbox, limits, keep_records=_tests(cells))
    if run.status == status.SANDBOX_LOST:  # not the solution's fault: say what the sandbox said
        raise SandboxError(sandbox.last_error or run.status)
    failed = [grade_id(c) for c, r in zip(cells, run.cells) if is_test(c) and (not r.finished or r.error)]
    if failed:
        raise SolutionFails(f"the solution fails its own tests {failed} ({run.status})")
    # The same cells without their hidden regions: a check that the full run makes and this one
    # does not is a hidden test's, and its failure message must say nothing of its inputs.
    shown = run_cells([visible_source(c.source) for c in cells], sandbox, limits, keep_records=_tests(cells))
    records = {}
    for c, full, visible in zip(cells, run.cells, shown.cells):
        if is_test(c):
            seen = set(keyed(visible.records))
            for key, record in keyed(full.records).items():
                if key not in seen:
                    record.options = dict(record.options, hidden=True)
            records[grade_id(c)] = full.records
    return records


def _tests(cells: list) -> set[int]:
    """The indices of the test cells among ``cells`` (only their records are judged)."""
    return {i for i, c in enumerate(cells) if is_test(c)}


def read_submission(path: Path) -> bytes:
    """The bytes of a submitted notebook, read only if it is a regular file (not a FIFO, device,
    socket or symbolic link: opened with ``O_NOFOLLOW | O_NONBLOCK``, so that none of them can
    block or redirect the read) of at most ``MAX_NOTEBOOK_BYTES`` (checked before reading).

    Raises:
        NotARegularFile, NotebookTooLarge (both ``OSError``), or ``OSError`` from the system.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotARegularFile("not a regular file")
        if info.st_size > MAX_NOTEBOOK_BYTES:
            raise NotebookTooLarge(f"{info.st_size} bytes, more than {MAX_NOTEBOOK_BYTES}")
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = f.read(MAX_NOTEBOOK_BYTES + 1)  # a file that grows while read is still bounded
    finally:
        os.close(fd)
    if len(data) > MAX_NOTEBOOK_BYTES:
        raise NotebookTooLarge(f"more than {MAX_NOTEBOOK_BYTES} bytes")
    return data


class NotARegularFile(OSError):
    """A submitted "notebook" that is a FIFO, a device, a socket or a symbolic link."""


class NotebookTooLarge(OSError):
    """A submitted notebook over ``MAX_NOTEBOOK_BYTES``."""


def _run_past_stops(texts: list[str], sandbox: Sandbox, limits: Limits, tests: set[int], retries: int = 3):
    """Run the cells; when one times out or kills its process, run them again in a new process
    with that cell left out, so one runaway question does not cost the others (at most
    ``retries`` times, within the notebook's total time). Returns ``(last run, {cell index:
    why it was left out})``."""
    stops: dict[int, str] = {}
    deadline = time.monotonic() + limits.total_timeout
    # Bounded by attempts and time, not by distinct cells: a notebook that crashes again on a cell
    # already left out (it patched the channel, say) must not loop.
    for attempt in range(retries + 1):
        sent = [f"# left out: {stops[i]}" if i in stops else text for i, text in enumerate(texts)]
        run = run_cells(sent, sandbox, limits, total_timeout=max(deadline - time.monotonic(), 1), keep_records=tests)
        if run.status == "ok" or run.cell is None:
            return run, stops
        stops.setdefault(run.cell, run.status)
        if attempt == retries or run.status == status.NOTEBOOK_TIME_LIMIT or time.monotonic() >= deadline:
            break
    return run, stops


@functools.lru_cache(maxsize=512)
def _withheld(text: str) -> str:
    """``references.withhold`` of a test or read-only cell's text (the source's: the same in every
    submission of an assignment), computed once per text."""
    return withhold(text)


_STUBS: dict[int, tuple] = {}  # id(source) -> (source, its release_answers): once per assignment


def _release_answers(source: nbformat.NotebookNode) -> dict[str, str]:
    """``stubs.release_answers(source)``, computed once per source notebook (the object: a source
    is never changed once loaded)."""
    held = _STUBS.get(id(source))
    if held is None or held[0] is not source:
        if len(_STUBS) > 64:
            _STUBS.clear()
        held = _STUBS[id(source)] = (source, release_answers(source))
    return held[1]


@dataclass
class Prepared:
    """A submission read and assembled, ready to run (:func:`prepare_notebook`): ``result`` with
    every question at 0; ``graded``, the source's cells with the learner's answers in them;
    ``texts``, its code cells' texts as sent (tests and read-only cells with their REFERENCE
    regions withheld); ``names``, each code cell's grade id or ``"cell N"``; ``blank``, the grade
    ids of the questions still answered as released."""

    result: Result
    graded: nbformat.NotebookNode
    texts: list[str]
    names: list[str]
    tests: set[int]
    blank: set[str]


def prepare_notebook(
    path: Path | None,
    source: nbformat.NotebookNode,
    student_id: str,
    assignment_id: str,
    stubs: dict[str, str] | None = None,
):
    """Read the submission at ``path`` (once; never written) and assemble it with ``source``: a
    :class:`Prepared`, or a :class:`Result` with its status when there is nothing to run (no
    notebook, not a regular file, too large, unreadable). Needs no sandbox: a class run prepares
    the next notebooks while one runs. Does not raise for anything the file holds.

    ``stubs`` (``{answer grade_id: text}``) given: ``source`` is a release, whose answer cells are
    the stubs, and whose checks judge in the learner's own process (a learner checking their own
    work, as nbgrader's Validate runs it): nothing is withheld."""
    result = unscored(source, student_id, assignment_id, status.GRADED)
    if path is None:
        result.status = status.NO_NOTEBOOK
        return result
    try:
        data = read_submission(path)
    except NotARegularFile:
        result.status = status.NOT_A_FILE
        return result
    except NotebookTooLarge:
        result.status = status.TOO_LARGE
        return result
    except OSError as error:
        result.status = status.unreadable(error)
        return result
    if problem := shape_problem(data):  # refused before a parser recurses into it or builds millions of objects
        result.status = status.unreadable_shape(problem)
        return result
    try:
        submission = nbformat.reads(data.decode("utf-8"), as_version=4)
    except Exception as error:  # noqa: BLE001 -- truncated JSON, invalid UTF-8, not a notebook at all
        result.status = status.unreadable(error)
        return result
    graded = assemble(source, submission)
    cells = _code_cells(graded)
    return Prepared(
        result,
        graded,
        [_withheld(c.source) if withheld_here(c) and stubs is None else c.source for c in cells],
        [grade_id(c) or f"cell {i + 1}" for i, c in enumerate(cells)],
        _tests(cells),
        unanswered(graded, _release_answers(source) if stubs is None else stubs),
    )


def run_prepared(prepared: Prepared, sandbox: Sandbox, limits: Limits):
    """Run a :class:`Prepared` notebook's cells in a new submission process of ``sandbox`` (again
    without a cell that stopped its process: :func:`_run_past_stops`); ``(run, stops)``."""
    return _run_past_stops(prepared.texts, sandbox, limits, prepared.tests)


def judge_run(prepared: Prepared, run, stops: dict[int, str], expected: dict[str, list]) -> Result:
    """Score each test cell of ``prepared`` from its ``run`` (see the module docstring) against
    ``expected`` (:func:`solution_records`), and put the outputs into its graded notebook
    (``result.notebook``). Runs in the grader, on what the run brought back: nothing it holds
    raises here."""
    result, cells = prepared.result, _code_cells(prepared.graded)
    if stops:
        result.status = status.stopped_in({prepared.names[i]: why for i, why in stops.items()})
    by_id = {q.grade_id: q for q in result.questions}
    for count, (cell, cell_run) in enumerate(zip(cells, run.cells), start=1):
        cell.outputs, cell.execution_count = cell_run.outputs, count if cell_run.finished else None
        if is_test(cell):
            q = by_id[grade_id(cell)]
            stopped = stops.get(count - 1) or (run.status if not cell_run.finished else None)
            q.score, message = question_points(q.points, cell_run, stopped, expected.get(q.grade_id, []))
            # the key is the grader's own (a field it fills), never read back out of the message's text
            q.cause = NOT_ANSWERED if message and q.grade_id in prepared.blank else getattr(message, "cause", "")
            # it may quote what the learner's code made (a dict's keys, an error): plain text, bounded
            # a "[cause: ...]" line in it is the learner's text, never read as the line the store adds
            q.message = _QUOTED_CAUSE.sub(r"\1[quoted cause:", shown_plain(str(message)))
            if len(q.message) > MAX_MESSAGE:
                q.message = q.message[:MAX_MESSAGE] + " ... (message cut)"
    result.notebook = prepared.graded
    return result


def grade_notebook(
    path: Path | None,
    source: nbformat.NotebookNode,
    expected: dict[str, list],
    student_id: str,
    assignment_id: str,
    sandbox: Sandbox,
    limits: Limits,
) -> Result:
    """Run the learner's answers with the source's tests in a new submission process of
    ``sandbox`` and score each test cell (see the module docstring): :func:`prepare_notebook`,
    :func:`run_prepared`, :func:`judge_run`. The submission is read once and never written.

    Args:
        path: the submitted ``.ipynb`` (None when the folder holds none).
        source: the assignment's nbgrader source notebook.
        expected: :func:`solution_records` of ``source``.

    Returns:
        A :class:`Result`. A broken submission gets a status; nothing it does raises here.
    """
    prepared = prepare_notebook(path, source, student_id, assignment_id)
    if isinstance(prepared, Result):
        return prepared
    run, stops = run_prepared(prepared, sandbox, limits)
    return judge_run(prepared, run, stops, expected)
