"""A learner's own exercises, each run top to bottom in a fresh process and judged: what
``python -m autograder progress`` records (``autograder.check.standing``).

Each exercise of the learner's folder runs as nbgrader's Validate runs a notebook: every code cell
in order, in a process that has run nothing before (so an answer that works only in the learner's
kernel, thanks to a cell since deleted or run out of order, fails here as it would when graded).
The processes are forked from one warm fork server (``grading.sandbox``, not in a container: the
learner's own code on the learner's machine), which imported torch once: a process per notebook
costs a fork, not a kernel's start and ``import torch``.

Two ways to judge, and the record says which ran:

- ``hidden`` (the course folder has ``solutions/``, as a clone of the repository does): each
  notebook is assembled with its source's test cells, hidden tests included, and graded as the
  class grader grades it (``judge.grade_one``) against the solutions' records, which are saved in
  the learner's folder (``.references.json``, the format of ``python -m autograder references``)
  and made again only when a solution or the grader's records code changed;
- ``visible`` (a class image: no ``solutions/``): assembled with the release's check cells (the
  learner's edits to them are undone) and run as they are; a question passes when its check cell
  ran to its end, raised nothing, and every record its checks made judges right here, outside the
  learner's process (``check.judge``), on the values the checks received.

A question whose answer cells are still the release's stubs is "not answered yet".
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from pathlib import Path

import nbformat

from ...check.standing import (
    FAILED,
    NOT_ANSWERED,
    ONLY_WHEN_GRADED,
    PASSED,
    ExerciseStanding,
    QuestionStanding,
    digest,
    exercise_paths,
    plain_title,
)
from ...check.summary import NO_CHECK_RAN
from .. import status
from ..judge.assemble import grade_id, is_answer, is_test
from ..judge.grade_one import (
    Prepared,
    Result,
    SolutionFails,
    judge_run,
    prepare_notebook,
    run_prepared,
    solution_records,
)
from ..judge.points import NOT_RUN, raised
from ..judge.verdict import verdict
from ..sandbox.container import Sandbox, extras_for
from ..sandbox.limits import Limits
from ..sandbox.values import decode_record, encode_record
from .saved_references import FORMAT as REFERENCES_FORMAT
from .saved_references import course_version, notebook_hash, write

__all__ = ["Checked", "check_exercises", "REFERENCES"]

REFERENCES = ".references.json"  # the solutions' records, in the learner's folder
LEARNER = "you"  # the student id a learner's own run is graded under (it appears nowhere)


@dataclass
class Checked:
    """What a check of the learner's exercises found: each exercise's standing, which tests
    judged (``"hidden"`` or ``"visible"``), and seconds spent (the fork server's start, the
    solutions' records when they were made again, the notebooks)."""

    exercises: list[ExerciseStanding]
    tests: str
    seconds: dict[str, float]


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def _number(gid: str) -> int:
    found = re.search(r"\d+", gid)
    return int(found[0]) if found else 0


def _answer_trouble(prepared: Prepared, run, stops: dict[int, str], limits: Limits) -> dict[str, str]:
    """``{test grade_id: why}`` for each question whose own answer cells (those since the previous
    test cell) raised or were stopped in this run: that is the cause to name first, before what
    the check then met (a name not defined)."""
    found, trouble = {}, ""
    cells = [c for c in prepared.graded.cells if c.cell_type == "code"]
    for index, (cell, cell_run) in enumerate(zip(cells, run.cells)):
        if is_test(cell):
            if trouble:
                found[grade_id(cell)] = trouble
            trouble = ""
        elif is_answer(cell) and not trouble:
            if index in stops:
                limit = f" (a cell may run {limits.cell_timeout:g} s)" if stops[index] == status.TIMEOUT else ""
                trouble = f"its answer cell was stopped: {stops[index]}{limit}"
            elif cell_run.finished and cell_run.error is not None:
                trouble = f"its answer cell raised {_first_line(raised(*cell_run.error))}"
    return found


def _standing(
    exercise: str, title_: str, sha: str, result: Result, blank: set[str], trouble: dict[str, str] | None = None
) -> ExerciseStanding:
    """A graded ``result`` as the record keeps it: per question, passed, not answered yet (its
    answer cells are the stubs, and it did not pass), or failed with the first line of why (its
    answer cell's own error first, from ``trouble``: :func:`_answer_trouble`)."""
    asked, trouble = [], trouble or {}
    for q in result.questions:
        if q.score >= q.points and not q.message:
            said, cause = PASSED, ""
        elif q.grade_id in blank:
            said, cause = NOT_ANSWERED, ""
        elif q.message == ONLY_WHEN_GRADED:
            said, cause = ONLY_WHEN_GRADED, ""
        else:
            said, cause = FAILED, _first_line(trouble.get(q.grade_id) or q.message or result.status)
        asked.append(QuestionStanding(_number(q.grade_id), q.points, q.score, said, cause))
    return ExerciseStanding(exercise, title_, sha, result.status, asked)


def _visible_message(cell_run, stopped: str | None) -> str:
    """Why a check cell run with its visible references did not pass ("" when it did)."""
    if stopped:
        return f"stopped: {stopped}"
    if cell_run is None or not cell_run.finished:
        return NOT_RUN
    if cell_run.error is not None:
        name, message = cell_run.error
        return message if name == "CheckFailed" and message else raised(name, message)
    if not cell_run.records:
        return NO_CHECK_RAN
    judged = [r for r in cell_run.records if not r.withheld]
    if not judged:
        return ONLY_WHEN_GRADED
    # each record judged outside the learner's process, against the expected value it carried
    return verdict(judged, judged)


def _judge_visible(prepared: Prepared, run, stops: dict[int, str]) -> Result:
    """Score each check cell of ``prepared`` (a release assembled with the learner's answers)
    from its own run: full points only on positive evidence (:func:`_visible_message`)."""
    result = prepared.result
    if stops:
        result.status = status.stopped_in({prepared.names[i]: why for i, why in stops.items()})
    by_id = {q.grade_id: q for q in result.questions}
    cells = [c for c in prepared.graded.cells if c.cell_type == "code"]
    for index, (cell, cell_run) in enumerate(zip(cells, run.cells)):
        if is_test(cell):
            q = by_id[grade_id(cell)]
            stopped = stops.get(index) or (run.status if not cell_run.finished else None)
            q.message = _visible_message(cell_run, stopped)
            q.score = 0.0 if q.message else q.points
    return result


def _release_stubs(release: nbformat.NotebookNode) -> dict[str, str]:
    """``{answer grade_id: text}``: the answer cells of a release, as released."""
    return {grade_id(c): c.source for c in release.cells if is_answer(c)}


def _references(course: Path, mine: Path, exercises: list[str], sandbox: Sandbox, limits: Limits) -> dict:
    """``{exercise: {test grade_id: [Checked, ...]} or the SolutionFails message}``: the solutions'
    records, from ``mine/.references.json`` where saved from the solution as it is now by this
    grader's records code, else made now (and saved for next time, unless the solution failed: on
    a busy machine that may be a time limit, so it is tried again next time). Solutions run with
    the default time limits or ``limits``' when longer (a learner's short ``--cell-timeout`` is
    for the learner's cells)."""
    limits = Limits(max(limits.cell_timeout, Limits.cell_timeout), max(limits.total_timeout, Limits.total_timeout))
    path = mine / REFERENCES
    try:
        saved = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        saved = {}
    if not isinstance(saved, dict) or saved.get("course_version") != course_version():
        saved = {}
    entries = saved.get("assignments") if isinstance(saved.get("assignments"), dict) else {}
    found, changed = {}, False
    for exercise in exercises:
        notebook = course / "solutions" / exercise / f"{exercise}.ipynb"
        sha, entry = notebook_hash(notebook), entries.get(exercise)
        if not (isinstance(entry, dict) and entry.get("sha256") == sha):
            source = nbformat.read(notebook, as_version=4)
            try:
                records = solution_records(source, sandbox, limits)
                entry = {"notebook": notebook.name, "sha256": sha}
                entry["records"] = {cell: [encode_record(r) for r in rs] for cell, rs in records.items()}
            except SolutionFails as error:
                found[exercise] = str(error)
                continue
            entries[exercise], changed = entry, True
        try:
            found[exercise] = {cell: [decode_record(r) for r in rs] for cell, rs in entry["records"].items()}
        except (ValueError, TypeError, KeyError, RuntimeError, AttributeError):
            entries.pop(exercise, None)  # unreadable: made again next time
            found[exercise], changed = "the saved references are unreadable: run the command again", True
    if changed:
        write({"format": REFERENCES_FORMAT, "course_version": course_version(), "assignments": entries}, path)
    return found


def check_exercises(
    course: Path,
    mine: Path,
    hidden: bool | None = None,
    limits: Limits = Limits(),
    only: list[str] | None = None,
    sandbox: Sandbox | None = None,
) -> Checked:
    r"""Run and judge each exercise of the learner's folder ``mine`` (module docstring).

    Args:
        course: the course folder: its ``exercises/`` (the release) and, for ``hidden``, ``solutions/``.
        mine: the learner's folder (``my-work/``), whose ``exercises/<id>/<id>.ipynb`` are run.
        hidden: judge with the hidden tests (None: when ``course/solutions`` is there).
        limits: the cell and notebook time limits (a notebook that never ends is stopped there).
        only: these exercise ids alone (default: every exercise of the release).
        sandbox: the fork server to run them in (``Sandbox(limits, sandboxed=False)``: the learner's
            own code), started or :meth:`~Sandbox.launch`\ ed by the caller, who closes it; by
            default one made here (and closed), which imports what the sources need.

    Returns:
        A :class:`Checked`. A notebook that is missing, unreadable or stops gets a status;
        nothing a notebook does raises here.

    Raises:
        grading.sandbox.container.SandboxError: the fork server could not start (the message says why).
    """
    course, mine = Path(course), Path(mine)
    released = exercise_paths(course)
    exercises = [e for e in released if only is None or e in only]
    hidden = (course / "solutions").is_dir() if hidden is None else hidden
    sources = {
        e: nbformat.read(course / "solutions" / e / f"{e}.ipynb" if hidden else released[e], as_version=4)
        for e in exercises
    }
    notebooks = {e: mine / "exercises" / e / f"{e}.ipynb" for e in exercises}
    prepared = {  # read once, before anything runs (no notebook, unreadable: a Result with that status)
        e: prepare_notebook(
            path if path.is_file() else None, sources[e], LEARNER, e, None if hidden else _release_stubs(sources[e])
        )
        for e, path in notebooks.items()
    }
    seconds = {}
    started = time.monotonic()
    own = sandbox is None
    if own:
        sandbox = Sandbox(limits, False, extras_for(c.source for nb in sources.values() for c in nb.cells))
    try:
        sandbox.ready()
        seconds["waiting for the fork server"] = time.monotonic() - started
        if hidden:  # the references of the exercises that will run, only
            started = time.monotonic()
            runnable = [e for e, p in prepared.items() if not isinstance(p, Result)]
            expected = _references(course, mine, runnable, sandbox, limits)
            seconds["references"] = time.monotonic() - started
        started = time.monotonic()
        standings = []
        for exercise, ready in prepared.items():
            sha = digest(notebooks[exercise])
            name = plain_title(released[exercise])  # the release's heading: the learner's copy may not read
            if isinstance(ready, Result):  # nothing to run: no notebook, unreadable
                standings.append(_standing(exercise, name, sha, ready, set()))
                continue
            if hidden and isinstance(expected[exercise], str):
                ready.result.status = status.not_graded(expected[exercise])
                standings.append(_standing(exercise, name, sha, ready.result, set()))
                continue
            run, stops = run_prepared(ready, sandbox, limits)
            if hidden:
                result = judge_run(ready, run, stops, expected[exercise])
            else:
                result = _judge_visible(ready, run, stops)
            trouble = _answer_trouble(ready, run, stops, limits)
            standings.append(_standing(exercise, name, sha, result, ready.blank, trouble))
        seconds["notebooks"] = time.monotonic() - started
    finally:
        if own:
            sandbox.close()
    return Checked(standings, "hidden" if hidden else "visible", seconds)
