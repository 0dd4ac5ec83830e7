"""Grading threads kept warm between calls: each with its sandbox (a fork server that imported torch
once), each assignment's references computed once, and the three stages of a class run.

A class run (``batch.grade_class``) makes one :class:`WarmGrader`, grades everything with one
:meth:`WarmGrader.grade_into` and closes it; the grading service (``grading.service``) keeps one
open for its whole life and calls :meth:`~WarmGrader.grade_into` for each handful of submissions,
so a submission costs its cells' own time, not a sandbox's start. Both go through this one path:
the same preparation, run, judgement, store records and feedback pages.
"""

from __future__ import annotations

import itertools
import os
import threading
import time
from collections import Counter
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, as_completed, wait
from pathlib import Path

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
from ..out.course_files import place_feedback, write_autograded
from ..out.feedback import feedback_html
from ..sandbox.container import Sandbox, SandboxError
from ..sandbox.limits import Limits
from .progress import GradingBar, solutions_bar

__all__ = ["WarmGrader", "SandboxUnavailable", "write_feedback"]

_BATCH = 16  # submissions recorded in one transaction at most (what a run killed meanwhile loses)


class SandboxUnavailable(RuntimeError):
    """Grading refused: the sandbox cannot start here (the message says why and how to fix it)."""


def write_feedback(result: Result, page: Path) -> None:
    """Write ``result``'s feedback page to ``page`` (``feedback_page`` writes it directly as HTML:
    a few milliseconds, in the grader's main thread)."""
    page.parent.mkdir(parents=True, exist_ok=True)
    # errors="replace": a learner's output may hold lone surrogates ("\ud800"), which UTF-8 cannot encode
    page.write_text(feedback_html(result), encoding="utf-8", errors="replace")


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


class WarmGrader:
    """``jobs`` grading threads, each keeping one sandbox, and the references of every assignment
    graded so far (use as a context manager, or :meth:`close`).

    Args:
        sources: ``{assignment_id: (notebook file name, source notebook)}`` (``batch.load_sources``).
        jobs: grading threads (default: CPU cores).
        limits, sandboxed: as ``batch.grade_class`` takes them.
        extras: what the fork servers import besides torch (``sandbox.extras_for``).
        saved: a ``saved_references.SavedReferences`` to load references from instead of runs.
        progress: show the progress bars of a class run.
    """

    def __init__(
        self,
        sources: dict,
        jobs: int | None = None,
        limits: Limits = Limits(),
        sandboxed: bool = True,
        extras: tuple[str, ...] = (),
        saved=None,
        progress: bool = True,
    ):
        self.sources, self.limits, self.saved, self.progress = sources, limits, saved, progress
        self.workers = jobs or os.cpu_count() or 1
        self.sandboxes = _Sandboxes(limits, sandboxed, extras)
        self.references: dict[str, dict] = {}
        self.broken: dict[str, str] = {}  # assignment -> status: its solution fails its own tests
        self.seeds: dict[str, float] = {}  # seconds a notebook of each assignment may take (progress's first guess)
        self._pool = ThreadPoolExecutor(max_workers=self.workers)
        self._preparer = ThreadPoolExecutor(1, "prepare")

    def __enter__(self) -> WarmGrader:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def launch(self, count: int) -> None:
        """Start ``count`` sandboxes now (at most ``jobs``), while the caller opens its gradebook."""
        self.sandboxes.launch(min(count, self.workers))

    def close(self) -> None:
        """Stop the threads and every sandbox (and so every process a submission started)."""
        self._pool.shutdown(wait=True)
        self._preparer.shutdown(wait=True)
        self.sandboxes.close()

    def _reference(self, assignment: str) -> None:
        try:
            if self.saved is not None:
                self.references[assignment] = self.saved.records(assignment)
                return
            start = time.monotonic()
            source = self.sources[assignment][1]
            self.references[assignment] = solution_records(source, self.sandboxes.get(), self.limits)
            self.seeds[assignment] = (time.monotonic() - start) / 2  # it ran twice: with and without hidden tests
        except SolutionFails as error:
            self.broken[assignment] = status.not_graded(str(error))

    def references_for(self, assignments) -> None:
        """Run the solutions of ``assignments`` not yet run (their records are the references), in
        the threads' own sandboxes.

        Raises:
            SandboxUnavailable: the sandbox could not run them at all (the message says why).
        """
        new = sorted(set(assignments) - set(self.references) - set(self.broken))
        with solutions_bar(len(new), self.progress and bool(new), self.saved is not None) as bar:
            for future in as_completed([self._pool.submit(self._reference, a) for a in new]):
                try:
                    future.result()
                except SandboxError as error:  # nothing can be graded: stop, and say why
                    raise SandboxUnavailable(str(error)) from None
                bar.update(1)

    def grade_into(
        self, store, submitted: Path, out: Path, todo: list, course, changes: dict, notes: list, recorded=None
    ) -> None:
        """Grade ``todo`` (``batch.Submission`` of known assignments under ``submitted``) and record
        each result in ``store`` from this thread (one connection), as it finishes; write each
        feedback page to ``out/feedback/<student>/<assignment>.html`` (and, with ``course``, the
        course's ``autograded/`` and ``feedback/``). Fills ``changes`` with ``{(student,
        assignment): (old, new)}`` and ``notes`` with problems met; ``recorded(result)``, when
        given, is called with each ``Result`` once its page is written (its notebook already freed).

        Raises:
            SandboxUnavailable: the sandbox could not run the solutions (nothing was graded).
        """
        self.references_for({s.assignment_id for s in todo})
        sources, sandboxes, limits, references = self.sources, self.sandboxes, self.limits, self.references
        sandboxed = sandboxes.sandboxed
        by_key = {(s.student_id, s.assignment_id): s for s in todo}

        def zeroed(submission, why: str) -> Result:
            """A result with every question at 0 and ``why`` as its status: nothing ran."""
            return unscored(sources[submission.assignment_id][1], submission.student_id, submission.assignment_id, why)

        def prepare(submission):
            """First stage (the preparing thread): read and assemble; a Result when nothing will run."""
            if submission.linked or submission.assignment_id in self.broken:  # nothing runs; every question 0
                return zeroed(submission, status.LINKED if submission.linked else self.broken[submission.assignment_id])
            try:
                source = sources[submission.assignment_id][1]
                return prepare_notebook(submission.path, source, submission.student_id, submission.assignment_id)
            except Exception as error:  # noqa: BLE001 -- one submission's grading never ends the batch
                return zeroed(submission, status.grader_error(error))

        def run(submission, prepared: Future):
            """Second stage (a grading thread, with its sandbox): run the prepared cells."""
            item = prepared.result()
            if isinstance(item, Result):
                return item, None
            try:
                return item, run_prepared(item, sandboxes.get(), limits)
            except Exception as error:  # noqa: BLE001
                return zeroed(submission, status.grader_error(error)), None

        def judged(submission, item, ran) -> Result:
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

        def hand_out(result: Result, submission) -> None:
            # After the store recorded it: the page then shows the late penalty the gradebook applied.
            notebook_file = sources[submission.assignment_id][0]
            page = out / "feedback" / submission.student_id / f"{submission.assignment_id}.html"
            try:
                write_feedback(result, page)
            except Exception as error:  # noqa: BLE001 -- nor does its page: the row and a page of the summary stay
                result.status, result.notebook = status.grader_error(error), None
                write_feedback(result, page)
            if course is not None:
                folder = folder_of(submitted, submission)
                write_autograded(course, result, notebook_file, folder)
                place_feedback(course, result.student_id, result.assignment_id, notebook_file, page, folder)
            result.notebook = None  # nothing needs it now; free it before the next one

        # Three stages overlap: while a grading thread's submission process runs one notebook's cells,
        # one thread reads and assembles the next ones and this thread judges and records the last
        # ones (their Python work then stays off the grading threads' path from one notebook to the
        # next). At most ``window`` notebooks are between reading and recording: memory stays flat.
        window = 2 * self.workers
        kinds = Counter(s.assignment_id for s in todo)
        grading = GradingBar(len(todo), self.workers, self.progress, kinds, self.seeds)
        try:  # a notebook's time is timed after its thread's sandbox started (progress.py)
            waiting, pending = iter(todo), {}
            timed_run = grading.timed(run, sandboxes.ready, kind=lambda submission, _: submission.assignment_id)

            def feed() -> None:
                for submission in itertools.islice(waiting, window - len(pending)):
                    prepared = self._preparer.submit(prepare, submission)
                    pending[self._pool.submit(timed_run, submission, prepared)] = submission

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
                    for result, written in zip(results, _record(store, items, zeroed, by_key, notes), strict=True):
                        key = (result.student_id, result.assignment_id)
                        changes[key] = (written.old, written.new)
                        result.late_penalty, result.seconds_late = written.late_penalty, written.seconds_late
                        hand_out(result, by_key[key])
                        grading.advance(result.assignment_id)
                        if recorded is not None:
                            recorded(result)
        finally:
            grading.close()


def _record(store, items: list, zeroed, by_key: dict, notes: list[str]) -> list:
    """``store.record_all(items)``; when that raises, each item again alone, so that one item the
    store cannot take (a time it cannot compare, a value nbgrader refuses) is that submission's
    ``crashed (grader error: ...)`` with no time, recorded beside everyone else's."""
    try:
        return store.record_all(items)
    except Exception:  # noqa: BLE001 -- the batch goes on; each item is tried alone below
        pass
    recorded = []
    for result, notebook_file, timestamp in items:
        try:
            recorded.append(store.record(result, notebook_file, timestamp))
        except Exception as error:  # noqa: BLE001
            key = (result.student_id, result.assignment_id)
            notes.append(f"{key[0]}/{key[1]}: the gradebook refused its result ({type(error).__name__}): recorded as 0")
            stand_in = zeroed(by_key[key], status.grader_error(error))
            result.status, result.questions, result.notebook = stand_in.status, stand_in.questions, None
            recorded.append(store.record(result, notebook_file, None))
    return recorded


def folder_of(submitted: Path, submission) -> Path | None:
    """The submission's folder, None when it is (or sits under) a symbolic link: nothing is read there."""
    return None if submission.linked else submitted / submission.student_id / submission.assignment_id


def _timestamp(submitted: Path, submission):
    folder = folder_of(submitted, submission)
    return submission_timestamp(folder) if folder is not None else (None, "")
