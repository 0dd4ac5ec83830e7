"""The service's loop: receive what the exchange's inbound folder holds, grade it as ``grade --course``
does, hand the feedback back through the exchange; again, every fraction of a second.

Each turn (:meth:`Service.step`):

1. **receive** (``inbound``): every new complete folder is copied into ``STATE/attempts/<id>/`` and
   recorded in the queue (``queue``), with the time that counts;
2. **decide** (``attempts``), in fair order, one submission per learner's assignment at a time:
   over the limit or too soon, it is kept, marked, and a page saying why is released;
3. **collect and grade**: the submission is put where ``nbgrader collect`` puts it
   (``<course>/submitted/<student>/<assignment>/``, with the time that counts as its
   ``timestamp.txt``) and graded by ``runs.warm.WarmGrader.grade_into``, the path ``grade
   --course DIR --student S --assignment A`` takes: the same gradebook rows, ``autograded/``,
   ``feedback/`` and pages; the sandboxes and references stay warm between turns;
4. **hand out** (``handout``): nbgrader's ``release_feedback`` code releases each page, and the
   queue records the outcome and which attempt the gradebook now holds, in one transaction;
5. **reconcile**: when the attempt that should count (``attempts.counting``: the latest, or the
   best) is not the one the gradebook holds (a worse attempt under ``best``, one the grader could
   not grade), that attempt is collected and graded again, so the gradebook and ``submitted/``
   hold it, exactly as a ``grade`` run on it would leave them.

A ``kill -9`` anywhere leaves each submission either not yet in the queue (its folder is still in
the inbound: it is received on restart) or in it, ``queued`` until step 4's transaction: a
restarted service grades those again (the gradebook's row is replaced, not doubled) and records
each submission once.
"""

from __future__ import annotations

import shutil
import sys
import threading
import time
from collections import Counter
from datetime import UTC
from pathlib import Path

from ..judge.grade_one import SolutionFails
from ..names import terminal
from ..runs import saved_references as saving
from ..runs.batch import load_sources, submission_in
from ..runs.saved_references import SavedReferences, StaleReferences
from ..runs.warm import WarmGrader
from ..sandbox.container import extras_for
from ..sandbox.limits import Limits
from ..store.config import course_config, course_paths
from ..store.gradebook import Store, StoreBusy
from ..store.views import CSV_COLUMNS, grade_rows, write_csv
from . import attempts, handout, held, inbound
from .queue import DONE, Attempt, Queue, summary
from .settings import Rules, exchange_of

__all__ = ["Service"]

WAITING = 16  # submissions of one learner queued at most; later ones wait in the exchange
# submissions taken in one turn per grading thread: each is handed out as soon as it is recorded, so
# a turn of many keeps the sandboxes busy without delaying the first ones
_TURN = 8
TRIES = 3  # failed turns after which an attempt is refused (a service's error, not retried forever)
REFUSED = 16  # names refused at once recorded per owning user; later ones are skipped, unrecorded
_RECORDS = 64  # refused names recorded in one turn (then the turn grades)


class Service:
    """Grading on submit for the nbgrader course folder ``course`` (see the module docstring).

    Args:
        rules: each assignment's attempt rules.
        state: the service's own folder (default ``<course>/grading-service``): the queue, each
            submission as received, its page; ``out``: where ``grade``'s ``OUT`` goes
            (``state/output``: ``grades.csv``, the pages).
        check_owner: refuse a folder that the student it names does not own.
        jobs, limits, sandboxed, references: as for ``grade``.
    """

    def __init__(
        self,
        course: Path,
        rules: Rules | None = None,
        state: Path | None = None,
        jobs: int | None = None,
        limits: Limits = Limits(),
        sandboxed: bool = True,
        references=None,
        check_owner: bool = True,
        log=None,
    ):
        self.course = Path(course).resolve()
        self.rules, self.check_owner = rules or Rules(), check_owner
        self.exchange = exchange_of(self.course)
        self.solutions, self.db_url, self.submitted = course_paths(self.course)
        self.config = course_config(self.course)
        self.state = Path(state).resolve() if state else self.course / "grading-service"
        self.out = self.state / "output"
        self.sources = load_sources(self.solutions)
        self.queue_path = self.state / "queue.db"
        self.queue = Queue(self.queue_path)
        self.known = self.queue.known()
        self.refused = Counter(self.queue.refused_by_owner())
        self.failures: dict[str, int] = {}  # failed turns of each queued attempt, in this life
        self.restores: dict[tuple[str, str], str] = {}
        self.dues: dict[str, float | None] = {}  # each assignment's due date, read at each turn that grades it
        self.hidden = {a: held.hidden_questions(source) for a, (_, source) in self.sources.items()}
        self.log = log or (lambda line: print(line, file=sys.stdout, flush=True))
        extras = extras_for(cell.source for _, nb in self.sources.values() for cell in nb.cells)
        self.grader = WarmGrader(self.sources, jobs, limits, sandboxed, extras, references, progress=False)
        self._dirty = False
        self._open: Store | None = None

    # -- life ----------------------------------------------------------------------------------

    def start(self) -> None:
        """Warm up: start the sandboxes, enter every assignment in the gradebook, run the solutions
        of the assignments released in the exchange (their references), and reconcile what an
        earlier life of the service left."""
        self.grader.launch(self.grader.workers)
        store = self._store()
        for assignment, (name, source) in self.sources.items():
            store.prepare(assignment, name, source)
        self._let_go()
        outbound = self.exchange.root / self.exchange.course_id / "outbound"
        released = [a for a in self.sources if (outbound / a).is_dir()]
        self._warm_references(released)
        for student, assignment in self.queue.pairs():
            self._reconcile(student, assignment)
        self.log(
            f"serving {terminal(self.exchange.course_id)}: watching {self.exchange.inbound} "
            f"({len(self.sources)} assignments, {len(released)} released, {len(self.queue.queued())} queued)"
        )

    def _warm_references(self, assignments: list[str]) -> None:
        """The references of ``assignments``: those the service saved in its folder before (each
        checked against its solution's SHA-256 and the grader's version), the rest run now; then
        all saved again, so a restarted service is warm in seconds."""
        path = self.state / "references.json"
        if self.grader.saved is None:
            try:
                saved = SavedReferences.load(path, self.solutions)
            except (FileNotFoundError, StaleReferences):
                saved = None
            for assignment in assignments if saved else ():
                try:
                    self.grader.references[assignment] = saved.records(assignment)
                except (StaleReferences, SolutionFails):
                    pass
        self.grader.references_for(assignments)
        grader = self.grader
        entries = {
            a: saving.entry(self.solutions, a, self.sources[a][0], grader.references.get(a), grader.broken.get(a, ""))
            for a in [*grader.references, *grader.broken]
        }
        saving.write(saving.document(entries), path)

    def close(self) -> None:
        self._let_go()
        self.grader.close()
        self.queue.close()

    def serve(self, stop: threading.Event, poll: float = 0.25) -> None:
        """:meth:`start`, then :meth:`step` until ``stop`` is set (waiting ``poll`` seconds when idle)."""
        self.start()
        while not stop.is_set():
            try:
                busy = self.step()
            except Exception as error:  # noqa: BLE001 -- the queue keeps the work: log, wait, go on
                self.log(f"error: {type(error).__name__}: {terminal(str(error))[:500]}; trying again in 5 s")
                self._let_go()
                busy = False
                stop.wait(5)
            if not busy:
                stop.wait(poll)

    def step(self) -> bool:
        """One turn: receive, then grade one handful. False when there was nothing to grade."""
        self.receive()
        self._release_due()
        batch = self._next()
        if not batch and not self.restores:
            if self._dirty:
                self._write_views()
            self._let_go()  # idle: the gradebook is free for the instructor's commands
            return False
        try:
            self._grade(batch)
        except StoreBusy as error:  # an instructor's grade run holds the gradebook: try again soon
            self.log(f"waiting: {error}")
            time.sleep(1)
        except Exception as error:
            self._failed(batch, error)
            raise
        return True

    def _failed(self, batch: list[Attempt], error: Exception) -> None:
        """Count a failed turn against each attempt in it (one that failed before is tried alone);
        one that failed :data:`TRIES` times is refused once, with the reason, never tried again."""
        for attempt in batch:
            self.failures[attempt.id] = self.failures.get(attempt.id, 0) + 1
            if self.failures[attempt.id] >= TRIES and (row := self.queue.get(attempt.id)) and row.state != DONE:
                reason = (
                    f"not graded: the service failed on it {TRIES} times ({type(error).__name__}); ask your teacher"
                )
                self.queue.finish(attempt.id, outcome="refused", reason=reason, status="not graded")
                self.log(f"refused {terminal(attempt.student)}/{terminal(attempt.assignment)} ({attempt.id}): {reason}")

    # -- 1. receive ------------------------------------------------------------------------------

    def receive(self) -> int:
        """Take every new complete submission into the queue; how many were taken. A learner with
        :data:`WAITING` submissions queued has the next ones left in the exchange until some are
        graded (their time is the kernel's, not the receipt's: waiting costs them nothing), so one
        learner's flood of submissions holds a bounded share of the service's disk and queue. Names
        refused at once (not a submission, not the owner's) are recorded up to :data:`REFUSED` per
        owning user, then only skipped (one log line), at most :data:`_RECORDS` a turn, after those
        that may be graded: a flood of junk folders costs its owner's share, not the classmates'.
        One over the limit already is recorded without its notebooks (it is not graded)."""
        count = records = 0
        waiting = Counter(a.student for a in self.queue.queued())
        for entry in inbound.scan(self.exchange.inbound, self.known, self.sources):
            if not entry.problem and waiting[entry.student] >= WAITING:
                continue  # seen again at a later turn
            folder = self.exchange.inbound / entry.name
            key = inbound.attempt_id(entry.name)
            problem = entry.problem or (inbound.owner_problem(folder, entry.student) if self.check_owner else "")
            shown = f"{terminal(entry.student or '?')}/{terminal(entry.assignment or '?')}"
            if problem:
                if self.refused[entry.owner] >= REFUSED:
                    self.known.add(entry.name)  # skipped for this life of the service, not recorded
                    if self.refused[entry.owner] == REFUSED:
                        self.log(f"refused {REFUSED} names of uid {entry.owner}: the next ones are skipped, unrecorded")
                        self.refused[entry.owner] += 1
                    continue
                if records >= _RECORDS:
                    break  # the rest at the next turn, after grading
                self.queue.add(key, entry.name, entry.student, entry.assignment, state=DONE, outcome="refused",
                               reason=problem, owner=entry.owner)  # fmt: skip
                self.refused[entry.owner] += 1
                records += 1
                self.log(f"refused {terminal(entry.name)[:160]}: {problem}")
            else:
                over = self._over_limit(entry.student, entry.assignment, waiting[entry.student])
                taken = inbound.take(folder, self._taken(key, entry.student, entry.assignment), notebooks=not over)
                expected = self.sources[entry.assignment][0]
                notebook = expected if expected in taken.notebooks else [*taken.notebooks, ""][0]
                self.queue.add(key, entry.name, entry.student, entry.assignment, submitted_at=taken.submitted_at,
                               claimed=taken.claimed, notebook=notebook, owner=entry.owner)  # fmt: skip
                self.log(f"received {shown} ({key})" + "".join(f"; {terminal(p)}" for p in taken.problems))
                waiting[entry.student] += 1
                count += 1
            self.known.add(entry.name)
        return count

    def _over_limit(self, student: str, assignment: str, waiting: int) -> bool:
        """True when a new submission of this learner's assignment will not be graded whatever comes
        before it: the limit is used up and none of theirs waits (its notebooks are not copied)."""
        policy = self.rules.of(assignment)
        if policy.limit is None or waiting:
            return False
        return len(self.queue.used(student, assignment)) >= policy.limit + self.queue.extra(student, assignment)

    def _taken(self, key: str, student: str, assignment: str) -> Path:
        return self.state / "attempts" / key / student / assignment

    # -- 2. decide -------------------------------------------------------------------------------

    def _next(self) -> list[Attempt]:
        """The next handful in fair order, one per learner's assignment, deciding the rules on each
        in turn; those not to be graded are finished here."""
        batch, busy = [], set(self.restores)
        for attempt in self.queue.queued():
            key = (attempt.student, attempt.assignment)
            if key in busy:
                continue
            policy = self.rules.of(attempt.assignment)
            used = self.queue.used(*key)
            decision = attempts.decide(policy, self.queue.extra(*key), used, attempt.submitted_at)
            if not decision.grade:
                self._refuse(attempt, decision)
                continue
            if self.failures.get(attempt.id) and batch:
                continue  # one that made a turn fail is tried alone
            taken = self._taken(attempt.id, *key)
            if attempt.notebook and not (taken / attempt.notebook).exists():  # over the limit, then granted more
                inbound.take(self.exchange.inbound / attempt.inbound, taken)
            busy.add(key)
            batch.append(attempt)
            if len(batch) >= _TURN * self.grader.workers or self.failures.get(attempt.id):
                break
        return batch

    def _refuse(self, attempt: Attempt, decision) -> None:
        page = handout.notice_html(attempt.assignment, decision.outcome, decision.reason)
        self._publish(attempt, "notice", page)
        self.queue.finish(attempt.id, outcome=decision.outcome, reason=decision.reason, status="not graded")
        self._drop_notebooks(attempt)
        self.log(f"{decision.outcome}: {terminal(attempt.student)}/{terminal(attempt.assignment)} ({attempt.id})")

    def _drop_notebooks(self, attempt: Attempt) -> None:
        """Delete the notebooks of an attempt that can never count again (its secret, time and pages
        stay): the service's disk holds, per learner's assignment, the attempt the gradebook should
        hold and those waiting, each at most 16 MiB (``inbound.take``)."""
        taken = self._taken(attempt.id, attempt.student, attempt.assignment)
        for notebook in taken.glob("*.ipynb") if taken.is_dir() else ():
            notebook.unlink(missing_ok=True)

    def _publish(self, attempt: Attempt, kind: str, page: str) -> None:
        """Release ``page`` as ``attempt``'s feedback, from ``STATE/attempts/<id>/<kind>/``."""
        taken = self._taken(attempt.id, attempt.student, attempt.assignment)
        folder = self.state / "attempts" / attempt.id / kind
        handout.publish(self.exchange, folder, taken, attempt.student, attempt.assignment, attempt.notebook, page)

    # -- 3. collect and grade; 4. hand out -------------------------------------------------------

    def _collect(self, attempt_id: str, student: str, assignment: str) -> None:
        """Put the submission where ``nbgrader collect`` would (replacing what is there)."""
        dest = self.submitted / student / assignment
        if dest.is_symlink() or dest.is_file():
            dest.unlink()
        elif dest.exists():
            shutil.rmtree(dest)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(self._taken(attempt_id, student, assignment), dest)

    def _grade(self, batch: list[Attempt]) -> None:
        started = time.monotonic()
        jobs: dict[tuple[str, str], tuple[str, Attempt | None]] = {}
        for attempt in batch:
            jobs[(attempt.student, attempt.assignment)] = (attempt.id, attempt)
        restores, self.restores = self.restores, {}
        for key, attempt_id in restores.items():
            jobs.setdefault(key, (attempt_id, None))
        graded, notes = [0], []

        def recorded(result) -> None:  # each one handed out as soon as the gradebook holds it
            key = (result.student_id, result.assignment_id)
            self._hand_out(key, *jobs[key], summary(result))
            graded[0] += 1

        try:
            for (student, assignment), (attempt_id, _) in jobs.items():
                self._collect(attempt_id, student, assignment)
            todo = [submission_in(self.submitted, s, a, self.sources) for s, a in jobs]
            store = self._store()  # open while there is work
            for assignment in {a for _, a in jobs}:
                due = store.duedate(assignment)
                self.dues[assignment] = due.replace(tzinfo=UTC).timestamp() if due else None
            self.grader.grade_into(store, self.submitted, self.out, todo, self.course, {}, notes, recorded)
        except BaseException:
            for key, attempt_id in restores.items():  # not done: they wait for the next turn
                self.restores.setdefault(key, attempt_id)
            raise
        finally:
            self._dirty = True
        self.log(f"graded {graded[0]} in {time.monotonic() - started:.2f} s" + "".join(f"; {n}" for n in notes))

    def _hand_out(self, key, attempt_id: str, attempt: Attempt | None, result: dict) -> None:
        student, assignment = key
        page = self.out / "feedback" / student / f"{assignment}.html"
        kept = self.state / "attempts" / attempt_id / "feedback.html"
        if page.is_file():
            shutil.copyfile(page, kept)
        held_until = self._held_until(assignment)
        if attempt is not None:
            crashed = result["status"].startswith(attempts.GRADER_ERROR)
            number = len(self.queue.used(student, assignment)) + 1
            fields = dict(
                outcome="not counted" if crashed else "graded",
                counted=0 if crashed else 1,
                number=None if crashed else number,
                reason="the grader could not grade it (its error, not yours): it does not use an attempt"
                if crashed else "",
                held_until=held_until,
                **result,
            )  # fmt: skip
        try:
            if held_until is None:
                handout.release(self.exchange, self.course, student, assignment)
            elif attempt is not None:  # a page without the held results; the full one at the due date
                row = Attempt(**{**attempt.__dict__, **fields})
                self._publish(row, "held", held.held_html(row, self.hidden[assignment]))
        except Exception as error:  # noqa: BLE001 -- the grade is recorded; the page waits for release_feedback
            self.log(f"feedback of {terminal(student)}/{terminal(assignment)} not released: {error}")
        if attempt is not None:
            with self.queue.atomic():
                self.queue.finish(attempt_id, **fields)
                self.queue.stand(student, assignment, attempt_id)
            self.log(
                f"{terminal(student)}/{terminal(assignment)} attempt {number if not crashed else '-'}: "
                f"{result['score']:g}/{result['max_score']:g} {terminal(result['status'])}"
            )
        else:
            self.queue.stand(student, assignment, attempt_id)
        self._reconcile(student, assignment)

    def _held_until(self, assignment: str) -> float | None:
        """The due date (seconds since the epoch) until which this assignment's hidden tests'
        results are held; None when nothing is held (no ``--hold-hidden``, no hidden tests, no due
        date, or one already past)."""
        due = self.dues.get(assignment)
        hold = self.rules.of(assignment).hold_hidden and self.hidden.get(assignment)
        return due if hold and due is not None and due > time.time() else None

    def _release_due(self) -> None:
        """At the due date, release the full pages of the attempts held until then."""
        now = time.time()
        for attempt in self.queue.held():
            if attempt.held_until <= now:
                kept = self.state / "attempts" / attempt.id / "feedback.html"
                if kept.is_file():
                    self._publish(attempt, "full", kept.read_text(encoding="utf-8", errors="replace"))
                self.queue.release_held(attempt.id)

    # -- 5. reconcile ----------------------------------------------------------------------------

    def _reconcile(self, student: str, assignment: str) -> None:
        want = attempts.counting(self.rules.of(assignment), self.queue.used(student, assignment))
        if want is not None and want.id != self.queue.standing(student, assignment):
            self.restores[(student, assignment)] = want.id
        for attempt in self.queue.of(student):  # done and not the one that counts: never graded again
            if attempt.assignment == assignment and attempt.state == DONE and (want is None or attempt.id != want.id):
                self._drop_notebooks(attempt)

    # -- the gradebook -----------------------------------------------------------------------------

    def _store(self) -> Store:
        """The course's gradebook, open while there is work and let go at the first idle turn: a
        SQLite gradebook has one writer at a time, and between bursts an instructor's ``grade`` or
        ``extension`` may take it. (Opened once per burst, not per turn: each opening compiles
        nbgrader's queries again, a third of a turn's time.)

        Raises:
            StoreBusy: an instructor's command holds it now (the turn is tried again).
        """
        if self._open is None:
            self._open = Store(self.db_url, self.config)
        return self._open

    def _let_go(self) -> None:
        if self._open is not None:
            store, self._open = self._open, None
            store.close()

    def _write_views(self) -> None:
        try:
            write_csv(self.out / "grades.csv", CSV_COLUMNS, grade_rows(self._store()))
            self._dirty = False
        except StoreBusy:
            pass
