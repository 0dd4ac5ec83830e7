"""Grade a class: every ``SUBMITTED/<student_id>/<assignment_id>/<notebook>.ipynb`` in parallel.

Each graded submission is recorded in nbgrader's gradebook (``store``) as soon as it is graded,
in one transaction with those graded while the last ones were written (at most ``_BATCH``), so a
run killed halfway keeps every submission recorded before, and its rerun grades the rest; then
``OUT/grades.csv`` is written from the store (every submission it holds, not only this run's)
with the feedback pages ``OUT/feedback/<student_id>/<assignment_id>.html``. Submissions are only
read. First each assignment's solution runs once (its records are the references); then ``jobs``
grading threads each keep one sandbox (a warm fork server in a bubblewrap container) and grade
one submission at a time in a fresh process of it. A sandbox that stops answering is replaced;
every process a submission started is gone before the next one starts, and all of them before
this function returns, so nothing can change ``grades.csv`` afterwards.
"""

from __future__ import annotations

import itertools
import os
import sys
import threading
import time
from collections import Counter
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, as_completed, wait
from dataclasses import dataclass
from pathlib import Path

import nbformat

from .. import status
from ..intake.exchange import submission_timestamp
from ..judge.grade_one import (
    Result,
    SolutionFails,
    judge_run,
    prepare_notebook,
    run_prepared,
    solution_records,
    unscored,
)
from ..names import UnsafeId, check_id
from ..out.course_files import place_feedback, write_autograded
from ..out.feedback import feedback_html
from ..sandbox.container import Sandbox, SandboxError, extras_for, sandbox_problem
from ..sandbox.limits import Limits
from ..store import default_db_url
from ..store.config import course_config
from ..store.gradebook import Store
from ..store.views import CSV_COLUMNS, grade_rows, number, write_csv
from .progress import GradingBar, solutions_bar
from .selection import selected
from .shards import one_writer_at_a_time, part_url

__all__ = [
    "Submission",
    "SandboxUnavailable",
    "find_submissions",
    "load_sources",
    "grade_class",
    "default_db_url",
    "CSV_COLUMNS",
]


_BATCH = 16  # submissions recorded in one transaction at most (what a run killed meanwhile loses)


class SandboxUnavailable(RuntimeError):
    """Grading refused: the sandbox cannot start here (the message says why and how to fix it)."""


@dataclass(frozen=True)
class Submission:
    """Where one student's notebook for one assignment is (``path`` None: none found);
    ``linked``: the notebook or a folder above it is a symbolic link, so it is not read (it could
    point at the solutions or at a classmate's notebook)."""

    student_id: str
    assignment_id: str
    path: Path | None
    linked: bool = False


def load_sources(solutions: Path) -> dict[str, tuple[str, nbformat.NotebookNode]]:
    """``{assignment_id: (notebook file name, source notebook)}`` for each ``solutions/<id>/``."""
    sources = {}
    for folder in sorted(p for p in solutions.iterdir() if p.is_dir()):
        notebooks = sorted(folder.glob("*.ipynb"))
        if notebooks:
            sources[folder.name] = (notebooks[0].name, nbformat.read(notebooks[0], as_version=4))
    return sources


def find_submissions(submitted: Path, sources: dict) -> list[Submission]:
    """Every ``<student>/<assignment>/`` folder under ``submitted``. The notebook is the one named
    as in the source, else the only ``.ipynb`` there (a learner who renamed it is still graded)."""
    found = []
    for student in sorted(p for p in submitted.iterdir() if p.is_dir() and _safe(p.name, "student id")):
        for assignment in sorted(p for p in student.iterdir() if p.is_dir() and _safe(p.name, "assignment id")):
            expected = assignment / sources.get(assignment.name, ("?",))[0]
            notebooks = _notebooks(assignment)
            path = expected if expected.is_file() else (notebooks[0] if len(notebooks) == 1 else None)
            linked = any(p.is_symlink() for p in (student, assignment, path) if p is not None)
            found.append(Submission(student.name, assignment.name, None if linked else path, linked))
    return found


def _notebooks(folder: Path) -> list[Path]:
    """The notebooks in ``folder``: its entries ending in ``.ipynb``, in any case (``.IPYNB``)."""
    return sorted(p for p in folder.iterdir() if p.suffix.lower() == ".ipynb")


def _safe(name: str, what: str) -> bool:
    """True for a safe id (``names.check_id``); else says on stderr, escaped, that it is skipped."""
    try:
        return bool(check_id(name, what))
    except UnsafeId as error:
        print(f"skipped: {error}", file=sys.stderr)
        return False


def write_feedback(result: Result, page: Path) -> None:
    """Write ``result``'s feedback page to ``page`` (``feedback_page`` writes it directly as HTML:
    a few milliseconds, in the grader's main thread)."""
    page.parent.mkdir(parents=True, exist_ok=True)
    # errors="replace": a learner's output may hold lone surrogates ("\ud800"), which UTF-8 cannot encode
    page.write_text(feedback_html(result), encoding="utf-8", errors="replace")


def _row(result: Result) -> dict:
    """A submission's ``grades.csv`` row as graded now (no store: an unknown assignment)."""
    return dict(
        student_id=result.student_id,
        assignment_id=result.assignment_id,
        score=number(result.score),
        max_score=number(result.max_score),
        status=result.status,
        failed=" ".join(q.grade_id for q in result.questions if q.score < q.points),
        late_penalty="0",
        timestamp="",
        late="",
    )


class _Sandboxes:
    """One sandbox per grading thread, taken on first use from those :meth:`launch` started (else
    a new one); all closed by :meth:`close`. ``extras``: what their fork servers also import
    (``sandbox.extras_for``)."""

    def __init__(self, limits: Limits, sandboxed: bool, extras: tuple[str, ...] = ()):
        self.limits, self.sandboxed, self.extras = limits, sandboxed, extras
        self._local, self._all, self._lock = threading.local(), [], threading.Lock()
        self._launched: list[Sandbox] = []

    def launch(self, count: int) -> None:
        """Start ``count`` sandboxes now, without waiting: their fork servers import torch at once,
        while the grader opens its gradebook."""
        for _ in range(count):
            sandbox = Sandbox(self.limits, self.sandboxed, self.extras)
            with self._lock:
                self._all.append(sandbox)
                self._launched.append(sandbox)
            sandbox.launch()

    def get(self) -> Sandbox:
        if getattr(self._local, "sandbox", None) is None:
            with self._lock:
                sandbox = self._launched.pop(0) if self._launched else None
                if sandbox is None:
                    sandbox = Sandbox(self.limits, self.sandboxed, self.extras)
                    self._all.append(sandbox)
            self._local.sandbox = sandbox
        return self._local.sandbox

    def ready(self) -> None:
        """Wait until this thread's sandbox has started (one that does not is its first
        notebook's to find: ``runner`` replaces it, or grades it ``sandbox lost``)."""
        try:
            self.get().ready()
        except SandboxError:
            pass

    def close(self) -> None:
        for sandbox in self._all:
            sandbox.close()


def grade_class(
    submitted: Path,
    out: Path,
    solutions: Path,
    jobs: int | None = None,
    progress: bool = True,
    limits: Limits = Limits(),
    sandboxed: bool = True,
    db_url: str | None = None,
    course: Path | None = None,
    students: list[str] | None = None,
    assignments: list[str] | None = None,
    duedates: dict[str, str] | None = None,
    changes: dict | None = None,
    notes: list[str] | None = None,
    references=None,
    shard: tuple[int, int] | None = None,
) -> list[dict]:
    """Grade the submissions under ``submitted`` with ``jobs`` grading threads (default: the
    number of CPU cores), each with its own sandbox; record each in the store as it finishes;
    then write ``out/grades.csv`` from the store, and the feedback pages.

    Args:
        sandboxed: False (``--no-sandbox``) runs submissions without bubblewrap, for notebooks
            the instructor trusts; every status then says ``(no sandbox)``.
        db_url: the gradebook (nbgrader's ``db_url``); default ``default_db_url(out)``.
        course: an nbgrader course folder: its ``nbgrader_config.py`` is read (late-submission
            plugin, stubs) and the graded notebooks and feedback pages are also written in its
            ``autograded/`` and ``feedback/`` (for formgrader and ``release_feedback``).
        students, assignments: grade only these (None: all); every other result in the store stays.
        duedates: ``{assignment_id: due date}`` (any text ``nbgrader.utils.parse_utc`` reads)
            written into the gradebook before grading; otherwise the gradebook's due dates apply.
        changes: when given, filled with ``{(student_id, assignment_id): (old score or None, new)}``.
        notes: when given, gets a line per problem met that did not stop grading (a timestamp
            that could not be read, say).
        references: a ``saved_references.SavedReferences`` (``--references refs.json``): the
            solutions' records are loaded from it instead of running the solutions.
        shard: ``(K, N)`` (``--shard K/N``): only the submissions of shard K of N (``shards``),
            recorded into ``db_url`` when it is a server database, else into the part gradebook
            ``shards.part_url`` names; no ``grades.csv`` (``merge`` writes it when all are done).

    Returns:
        This run's rows (dicts with the keys of ``CSV_COLUMNS``, as in ``grades.csv``), sorted by
        student and assignment.

    Raises:
        FileNotFoundError: ``submitted`` or ``solutions`` is not a folder.
        selection.NothingToGrade: no submission of ``students`` and ``assignments`` (nothing written).
        StaleReferences: ``references`` were not saved from these solutions (nothing is written).
        SandboxUnavailable: ``sandboxed`` and bubblewrap cannot run here, or the sandbox does not
            start (the message says why, with bwrap's own words, and how to fix it).
        store.gradebook.StoreBusy: another run is writing to the same SQLite gradebook.
    """
    for folder in (submitted, solutions):
        if not folder.is_dir():
            raise FileNotFoundError(f"not a folder: {folder}")
    sources = load_sources(solutions)
    submissions = selected(find_submissions(submitted, sources), submitted, students, assignments, shard)
    if sandboxed and (problem := sandbox_problem()):
        raise SandboxUnavailable(problem)
    if references is not None:  # saved references: refuse stale ones before anything is written
        references.check({s.assignment_id for s in submissions if s.assignment_id in sources})
    notes = notes if notes is not None else []
    for submission in submissions:  # a renamed notebook is graded (find_submissions): say which file it was
        expected = sources.get(submission.assignment_id, ("",))[0]
        name = f"{submission.student_id}/{submission.assignment_id}"
        if submission.path is not None and expected and submission.path.name != expected:
            notes.append(f"{name}: graded {submission.path.name} (expected {expected})")
        elif submission.path is None and expected and not submission.linked:
            if len(found := _notebooks(submitted / submission.student_id / submission.assignment_id)) > 1:
                listed = ", ".join(p.name for p in found)
                notes.append(f"{name}: no notebook graded: {len(found)} notebooks ({listed}), none named {expected}")
    changes = changes if changes is not None else {}
    out.mkdir(parents=True, exist_ok=True)
    url = part_url(db_url or default_db_url(out), out, shard)
    todo = [s for s in submissions if s.assignment_id in sources]
    graded = sorted({s.assignment_id for s in todo})
    # the sandboxes start now (torch imports for seconds), while this process opens the gradebook
    sandboxes = _Sandboxes(limits, sandboxed, extras_for(cell.source for a in graded for cell in sources[a][1].cells))
    try:
        sandboxes.launch(min(jobs or os.cpu_count() or 1, len(todo)))
        with one_writer_at_a_time(url, shard):  # shards sharing a server gradebook make its tables in turn
            store = Store(url, course_config(course))
            try:
                for assignment in graded:
                    store.prepare(assignment, sources[assignment][0], sources[assignment][1])
                for assignment, due in (duedates or {}).items():
                    store.set_duedate(assignment, due)
            except BaseException:
                store.close()
                raise
        try:
            rows = _grade_into(
                store, submitted, out, sources, submissions, todo, jobs, progress, limits, sandboxes, course,
                changes, notes, references,
            )  # fmt: skip
            if shard is None:  # a shard writes no view: the other shards may still be grading
                write_csv(out / "grades.csv", CSV_COLUMNS, grade_rows(store))
        finally:
            store.close()
    finally:
        sandboxes.close()
    rows.sort(key=lambda r: (r["student_id"], r["assignment_id"]))
    return rows


def _grade_into(
    store, submitted, out, sources, submissions, todo, jobs, progress, limits, sandboxes, course, changes, notes,
    references=None,
) -> list[dict]:  # fmt: skip
    """Grade ``todo`` in ``sandboxes`` and record each result in ``store`` from this thread (one connection)."""
    saved, references, broken, sandboxed = references, {}, {}, sandboxes.sandboxed
    seeds = {}  # seconds a notebook of each assignment may take: its solution's (progress's first guess)

    def reference(assignment: str) -> None:
        try:
            if saved is not None:
                references[assignment] = saved.records(assignment)
                return
            start = time.monotonic()
            references[assignment] = solution_records(sources[assignment][1], sandboxes.get(), limits)
            seeds[assignment] = (time.monotonic() - start) / 2  # it ran twice: with and without hidden tests
        except SolutionFails as error:
            broken[assignment] = status.not_graded(str(error))

    def zeroed(submission: Submission, why: str) -> Result:
        """A result with every question at 0 and ``why`` as its status: nothing ran."""
        return unscored(sources[submission.assignment_id][1], submission.student_id, submission.assignment_id, why)

    def prepare(submission: Submission):
        """First stage (the preparing thread): read and assemble; a Result when nothing will run."""
        if submission.linked or submission.assignment_id in broken:  # nothing runs; every question 0
            return zeroed(submission, status.LINKED if submission.linked else broken[submission.assignment_id])
        try:
            return prepare_notebook(
                submission.path, sources[submission.assignment_id][1], submission.student_id, submission.assignment_id
            )
        except Exception as error:  # noqa: BLE001 -- one submission's grading never ends the batch
            return zeroed(submission, status.grader_error(error))

    def run(submission: Submission, prepared: Future):
        """Second stage (a grading thread, with its sandbox): run the prepared cells."""
        item = prepared.result()
        if isinstance(item, Result):
            return item, None
        try:
            return item, run_prepared(item, sandboxes.get(), limits)
        except Exception as error:  # noqa: BLE001
            return zeroed(submission, status.grader_error(error)), None

    def judged(submission: Submission, item, ran) -> Result:
        """Third stage (this thread): score the run against the references."""
        if ran is None:
            result = item
        else:
            try:
                result = judge_run(item, *ran, references[submission.assignment_id])
            except Exception as error:  # noqa: BLE001
                result = zeroed(submission, status.grader_error(error))
        if not sandboxed:
            result.status = status.unsandboxed(result.status)
        return result

    def hand_out(result: Result, submission: Submission) -> None:
        # After the store recorded it: the page then shows the late penalty the gradebook applied.
        notebook_file = sources[submission.assignment_id][0]
        page = out / "feedback" / submission.student_id / f"{submission.assignment_id}.html"
        try:
            write_feedback(result, page)
        except Exception as error:  # noqa: BLE001 -- nor does its page: the row and a page of the summary stay
            result.status, result.notebook = status.grader_error(error), None
            write_feedback(result, page)
        if course is not None:
            folder = _folder(submitted, submission)
            write_autograded(course, result, notebook_file, folder)
            place_feedback(course, result.student_id, result.assignment_id, notebook_file, page, folder)
        result.notebook = None  # nothing needs it now; free it before the next one

    rows = [
        dict(
            student_id=s.student_id,
            assignment_id=s.assignment_id,
            score="0",
            max_score="0",
            status=status.UNKNOWN_ASSIGNMENT,
            failed="",
            late_penalty="0",
            timestamp="",
            late="",
        )
        for s in submissions
        if s.assignment_id not in sources
    ]
    by_key = {(s.student_id, s.assignment_id): s for s in todo}
    workers = jobs or os.cpu_count() or 1
    # Three stages overlap: while a grading thread's submission process runs one notebook's cells,
    # one thread reads and assembles the next ones and this thread judges and records the last
    # ones (their Python work then stays off the grading threads' path from one notebook to the
    # next). At most ``window`` notebooks are between reading and recording: memory stays flat.
    window = 2 * workers
    with ThreadPoolExecutor(max_workers=workers) as pool, ThreadPoolExecutor(1, "prepare") as preparer:
        # the solutions first (their records are the references), in the threads' own sandboxes
        assignments = sorted({s.assignment_id for s in todo})
        with solutions_bar(len(assignments), progress, saved is not None) as bar:  # a phase of its own
            for future in as_completed([pool.submit(reference, a) for a in assignments]):
                try:
                    future.result()
                except SandboxError as error:  # nothing can be graded: stop, and say why
                    raise SandboxUnavailable(str(error)) from None
                bar.update(1)
        kinds = Counter(s.assignment_id for s in todo)
        grading = GradingBar(len(todo), workers, progress, kinds, seeds)
        try:  # a notebook's time is timed after its thread's sandbox started (progress.py)
            waiting, pending = iter(todo), {}
            timed_run = grading.timed(run, sandboxes.ready, kind=lambda submission, _: submission.assignment_id)

            def feed() -> None:
                for submission in itertools.islice(waiting, window - len(pending)):
                    prepared = preparer.submit(prepare, submission)
                    pending[pool.submit(timed_run, submission, prepared)] = submission

            feed()
            while pending:
                # every result graded while the last ones were recorded: one transaction for them
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                ran = [(pending.pop(f), f.result()) for f in done]
                feed()  # the next ones start before this thread judges and records these
                finished = sorted(
                    (judged(submission, *outcome) for submission, outcome in ran),
                    key=lambda r: (r.student_id, r.assignment_id),
                )
                for start in range(0, len(finished), _BATCH):
                    results = finished[start : start + _BATCH]
                    items = []
                    for result in results:
                        timestamp, problem = _timestamp(submitted, by_key[(result.student_id, result.assignment_id)])
                        if problem:
                            notes.append(f"{result.student_id}/{result.assignment_id}: {problem}")
                        items.append((result, sources[result.assignment_id][0], timestamp))
                    for result, recorded in zip(results, store.record_all(items), strict=True):
                        changes[(result.student_id, result.assignment_id)] = (recorded.old, recorded.new)
                        result.late_penalty, result.seconds_late = recorded.late_penalty, recorded.seconds_late
                        hand_out(result, by_key[(result.student_id, result.assignment_id)])
                        grading.advance(result.assignment_id)
        finally:
            grading.close()
    graded = set(changes)
    rows += [r for r in grade_rows(store) if (r["student_id"], r["assignment_id"]) in graded]
    return rows


def _folder(submitted: Path, submission: Submission) -> Path | None:
    """The submission's folder, None when it is (or sits under) a symbolic link: nothing is read there."""
    return None if submission.linked else submitted / submission.student_id / submission.assignment_id


def _timestamp(submitted: Path, submission: Submission):
    folder = _folder(submitted, submission)
    return submission_timestamp(folder) if folder is not None else (None, "")
