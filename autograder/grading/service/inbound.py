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
  (at most :data:`MAX_NOTEBOOKS`, names without control characters) and the secret; nothing else
  is opened, whatever its name;
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
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from ..intake.exchange import SECRET, TIMESTAMP
from ..judge.grade_one import NotARegularFile, NotebookTooLarge, read_submission
from ..names import SAFE_ID, without_controls

__all__ = ["Entry", "Taken", "scan", "take", "attempt_id", "nbgrader_time", "SETTLE", "MAX_NOTEBOOKS"]

SETTLE = 10.0  # seconds unchanged after which a folder without nbgrader's final chmod is taken anyway
MAX_NOTEBOOKS = 8  # .ipynb files taken from one submission (an assignment has one)
_MAX_SMALL = 1000  # bytes of a secret or timestamp read
MAX_ENTRIES = 1000  # names looked at in one submission's folder


@dataclass(frozen=True)
class Entry:
    """One name in the inbound folder: ``student`` and ``assignment`` as it states them ('' when it
    holds no safe id), ``problem`` why it will not be graded ('' when it may be)."""

    name: str
    student: str
    assignment: str
    problem: str = ""


@dataclass
class Taken:
    """A submission copied into the service's folder: the time that counts (seconds since the
    epoch, NOTE [time that counts]), what its ``timestamp.txt`` said, the notebooks taken and the
    problems met (a file refused, with its name escaped)."""

    submitted_at: float
    claimed: str
    notebooks: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


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
    if assignment not in assignments:
        return Entry(name, student, assignment, "refused: unknown assignment")
    return Entry(name, student, assignment)


def scan(inbound: Path, known: set[str], assignments, now: float | None = None) -> list[Entry]:
    """The entries of ``inbound`` not in ``known`` that are ready to take (or refused outright), in
    the order of their change times. ``assignments``: the ids graded here. A folder still being
    written is left for a later scan."""
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
        found.append((info.st_ctime, entry))
    return [entry for _, entry in sorted(found, key=lambda f: (f[0], f[1].name))]


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


def take(folder: Path, dest: Path, tries: int = 3) -> Taken:
    """Copy the submission in ``folder`` into ``dest`` (made; replaced when there): its notebooks,
    its secret and a ``timestamp.txt`` of the time that counts. Raises nothing for what the folder
    holds; ``OSError`` only when ``dest`` cannot be written."""
    for _ in range(tries):
        before = _ctimes(folder)
        if dest.exists():
            shutil.rmtree(dest)
        dest.mkdir(parents=True)
        taken = _copy(folder, dest)
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


def _copy(folder: Path, dest: Path) -> Taken:
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
        else:
            try:
                data = read_submission(folder / name)
            except OSError as error:
                why = str(error) if isinstance(error, NotARegularFile | NotebookTooLarge) else error.strerror
                why = why or type(error).__name__
                taken.problems.append(f"{shown!r}: not taken ({why})")
                continue
            (dest / name).write_bytes(data)
            taken.notebooks.append(name)
    return taken


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
