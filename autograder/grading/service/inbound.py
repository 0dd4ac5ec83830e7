"""The exchange's inbound folder, read as hostile: what ``nbgrader submit`` left there, taken into
the service's own folder before anything else reads it.

``nbgrader submit`` makes ``<root>/<course>/inbound/<student>+<assignment>+<timestamp>+<random>/``,
copies the learner's files into it, writes ``timestamp.txt`` and ``submission_secret.txt``, and
finally makes the folder ``rwxrwxrwx``; the folder and its files belong to the learner, who can
still change them. Every learner can create any name there (the folder is writable by all), so:

- a folder is taken when complete (its secret written and its mode ``0777``, or untouched for
  :data:`SETTLE` seconds), once: its name is the submission's key in the queue;
- the student it names must own it (``check_owner``): nobody spends a classmate's attempts;
- only what grading needs is copied, each read as ``grade`` reads a notebook (a regular file, not
  a link, FIFO or device, at most 16 MiB, checked before reading): the ``.ipynb`` files at its top
  (at most :data:`MAX_NOTEBOOKS`, names without control characters, 16 MiB together, a sparse
  file counted at its full length) and the secret; nothing else is opened, whatever its name;
- NOTE [time that counts]: a learner writes ``timestamp.txt`` (and the folder's name) as they
  please, and can set a file's modification time (``touch -d``); nobody but the kernel sets a
  file's change time (ctime), and any change moves it later. The time that counts is the latest
  ctime of the folder and the files taken, read before and after they are copied (a change
  meanwhile means copying again): the moment the submission reached the state graded, never
  earlier than the learner really handed it in, and, when the service was down or busy, not the
  later moment it looked. That time is written as the copy's ``timestamp.txt`` in nbgrader's
  format, so the gradebook's late penalty (``grade``'s, from ``timestamp.txt``) uses it; what the
  learner's file said is kept as ``claimed`` for the instructor.
"""

from __future__ import annotations

import hashlib
import os
import pwd
import shutil
import stat
import time
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path

from ..intake.bounds import MAX_NOTEBOOK_BYTES
from ..intake.exchange import SECRET, TIMESTAMP
from ..judge.grade_one import NotARegularFile, NotebookTooLarge, read_submission
from ..names import SAFE_ID, without_controls

__all__ = ["Entry", "Taken", "scan", "take", "attempt_id", "nbgrader_time", "SETTLE", "MAX_NOTEBOOKS"]

SETTLE = 10.0  # seconds unchanged after which a folder without nbgrader's final chmod is taken anyway
MAX_NOTEBOOKS = 8  # .ipynb files taken from one submission (an assignment has one)
_MAX_SMALL = 1000  # bytes of a secret or timestamp read
MAX_ENTRIES = 1000  # names looked at in one submission's folder
_TOGETHER = f"not taken (the notebooks pass {MAX_NOTEBOOK_BYTES >> 20} MiB together)"
# the names the service writes beside a submission's copy in ``STATE/attempts/<id>/`` (the page kept,
# the notice, held and full pages' folders): a student id among them would turn one into the other
SERVICE_NAMES = frozenset({"feedback.html", "notice", "held", "full"})


@dataclass(frozen=True)
class Entry:
    """One name in the inbound folder: ``student`` and ``assignment`` as it states them ('' when it
    holds no safe id), ``problem`` why it will not be graded ('' when it may be)."""

    name: str
    student: str
    assignment: str
    problem: str = ""
    owner: int = -1  # the folder's owning uid (-1: not looked at): whose share a refused name costs


@dataclass
class Taken:
    """A submission copied into the service's folder: the time that counts (seconds since the
    epoch, NOTE [time that counts]), what its ``timestamp.txt`` said, the notebooks taken and the
    problems met (a file refused, with its name escaped)."""

    submitted_at: float
    claimed: str
    notebooks: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    size: int = 0  # bytes of the notebooks copied: at most MAX_NOTEBOOK_BYTES together


def attempt_id(name: str) -> str:
    """The queue's key of an inbound name: 20 hex digits of its SHA-256 (a name is data; a key is safe
    in paths and URLs)."""
    return hashlib.sha256(name.encode("utf-8", "surrogateescape")).hexdigest()[:20]


def nbgrader_time(seconds: float) -> str:
    """``seconds`` since the epoch as ``nbgrader submit`` writes ``timestamp.txt`` (its default
    ``timestamp_format`` in UTC): ``2026-01-20 10:00:00.123456 UTC``."""
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d %H:%M:%S.%f UTC")


def _parse(name: str, assignments) -> Entry:
    parts = name.rsplit("+", 3)  # as nbgrader's collect splits it: a student id may hold '+'
    if len(parts) < 3:
        return Entry(name, "", "", "not a submission's name (student+assignment+time+random)")
    student, assignment = parts[0], parts[1]
    safe = [bool(SAFE_ID.fullmatch(x)) for x in (student, assignment)]
    if not all(safe):
        return Entry(name, student if safe[0] else "", assignment if safe[1] else "", "refused: not a safe id")
    if student in SERVICE_NAMES:
        return Entry(name, "", assignment, "refused: a student id the service's folder uses for its own files")
    if assignment not in assignments:
        return Entry(name, student, assignment, "refused: unknown assignment")
    return Entry(name, student, assignment)


def scan(inbound: Path, known: set[str], assignments, now: float | None = None) -> list[Entry]:
    """The entries of ``inbound`` not in ``known`` that are ready to take (or refused outright):
    those that may be graded first, then those refused, each in the order of their change times
    (a learner's junk never comes before a classmate's submission). ``assignments``: the ids graded
    here. A folder still being written is left for a later scan."""
    now = time.time() if now is None else now
    found = []
    try:
        listing = list(os.scandir(inbound))
    except FileNotFoundError:
        return []
    for item in listing:
        if item.name in known:
            continue
        try:
            info = item.stat(follow_symlinks=False)
        except OSError:
            continue
        entry = _parse(item.name, assignments)
        if not entry.problem and not stat.S_ISDIR(info.st_mode):
            entry = Entry(entry.name, entry.student, entry.assignment, "refused: not a folder (a link or a file)")
        elif not entry.problem and not _complete(Path(item.path), info, now):
            continue
        found.append((bool(entry.problem), info.st_ctime, replace(entry, owner=info.st_uid)))
    return [entry for *_, entry in sorted(found, key=lambda f: (f[0], f[1], f[2].name))]


def _complete(folder: Path, info: os.stat_result, now: float) -> bool:
    """nbgrader's submit is done with it: the secret is there and the last chmod made it 0777, or
    nothing changed for :data:`SETTLE` seconds (another way of handing in)."""
    has_secret = os.path.lexists(folder / SECRET)
    final_mode = stat.S_IMODE(info.st_mode) & 0o777 == 0o777
    return (has_secret and final_mode) or now - info.st_ctime > SETTLE


def owner_problem(folder: Path, student: str) -> str:
    """'' when ``folder`` belongs to the user named ``student``, else why not (escaped)."""
    try:
        uid = folder.lstat().st_uid
        owner = pwd.getpwuid(uid).pw_name
    except KeyError:
        owner = f"uid {uid}"
    except OSError as error:
        return f"refused: unreadable ({type(error).__name__})"
    return "" if owner == student else f"refused: handed in by {without_controls(owner)[:40]}, not by {student}"


def take(folder: Path, dest: Path, tries: int = 3, notebooks: bool = True) -> Taken:
    """Copy the submission in ``folder`` into ``dest`` (made; replaced when there): its notebooks
    (only their names with ``notebooks=False``: one that will not be graded costs no disk), its
    secret and a ``timestamp.txt`` of the time that counts. Raises nothing for what the folder
    holds; ``OSError`` only when ``dest`` cannot be written."""
    for _ in range(tries):
        before = _ctimes(folder)
        if dest.exists():
            shutil.rmtree(dest)
        dest.mkdir(parents=True)
        taken = _copy(folder, dest, notebooks)
        after = _ctimes(folder)
        if after == before:
            break
    taken.submitted_at = max(after.values(), default=time.time())
    (dest / TIMESTAMP).write_text(nbgrader_time(taken.submitted_at), encoding="utf-8")
    return taken


def _listing(folder: Path) -> list[str]:
    """The names at the top of ``folder``, at most :data:`MAX_ENTRIES` (a folder of a million
    files costs one bounded read), sorted."""
    names = []
    with os.scandir(folder) as items:
        for item in items:
            names.append(item.name)
            if len(names) >= MAX_ENTRIES:
                break
    return sorted(names)


def _ctimes(folder: Path) -> dict[str, float]:
    """The ctime of ``folder`` and of each entry at its top (never followed)."""
    times = {}
    try:
        times["."] = folder.lstat().st_ctime
        for name in _listing(folder):
            try:
                times[name] = os.lstat(folder / name).st_ctime
            except OSError:
                pass
    except OSError:
        pass
    return times


def _copy(folder: Path, dest: Path, notebooks: bool = True) -> Taken:
    taken, names = Taken(0.0, ""), []
    try:
        names = _listing(folder)
    except OSError as error:
        taken.problems.append(f"the folder could not be read ({type(error).__name__})")
    if len(names) >= MAX_ENTRIES:
        taken.problems.append(f"more than {MAX_ENTRIES} entries: only {MAX_ENTRIES} were looked at")
    for name in names:
        shown = without_controls(name)[:80] or "(a name of control characters)"
        if name in (TIMESTAMP, SECRET):
            text = _small(folder / name)
            if name == TIMESTAMP:
                taken.claimed = without_controls(text or "")[:100]
            elif text is not None:
                (dest / SECRET).write_text(text, encoding="utf-8")
            continue
        if not name.lower().endswith(".ipynb"):
            continue  # nothing but notebooks is graded; other files are never opened
        if shown != name or len(name.encode("utf-8", "surrogateescape")) > 200:
            taken.problems.append(f"{shown!r}: a notebook whose name holds control characters or is too long")
        elif len(taken.notebooks) >= MAX_NOTEBOOKS:
            taken.problems.append(f"{shown!r}: more than {MAX_NOTEBOOKS} notebooks; not taken")
        elif not notebooks:
            taken.notebooks.append(name)
        elif MAX_NOTEBOOK_BYTES - taken.size < _size(folder / name) <= MAX_NOTEBOOK_BYTES:  # too big alone: its reason
            taken.problems.append(f"{shown!r}: {_TOGETHER}")
        else:
            try:
                data = read_submission(folder / name)
            except OSError as error:
                why = str(error) if isinstance(error, NotARegularFile | NotebookTooLarge) else error.strerror
                why = why or type(error).__name__
                taken.problems.append(f"{shown!r}: not taken ({why})")
                continue
            if len(data) + taken.size > MAX_NOTEBOOK_BYTES:  # grown since it was looked at
                taken.problems.append(f"{shown!r}: {_TOGETHER}")
                continue
            (dest / name).write_bytes(data)
            taken.size += len(data)
            taken.notebooks.append(name)
    return taken


def _size(path: Path) -> int:
    """The bytes a copy of ``path`` would take (its length, as written out: a sparse file costs its
    full length in the copy), 0 when it cannot be looked at (reading it then says why)."""
    try:
        return os.lstat(path).st_size
    except OSError:
        return 0


def _small(path: Path) -> str | None:
    """A short text file's content (``read_submission``'s checks, at most 1000 bytes), None when
    it is not a regular file."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return os.read(fd, _MAX_SMALL).decode("utf-8", errors="replace").strip()
    except OSError:
        return None
    finally:
        os.close(fd)
