"""An LMS's bulk download, unpacked into nbgrader's layout in a scratch folder.

Two namings are understood (the LMS writes one zip per assignment):

- Canvas ("Download Submissions"): ``<lastfirst>_<user id>_<submission id>_<file name>``, with
  ``LATE_`` before the user id for a late submission; Canvas appends ``-1``, ``-2`` to a file name
  a learner submitted again. The learner is Canvas's user id (the roster's ``canvas_id``; without
  a roster, the user id itself is the student id).
- Moodle ("Download all submissions"): a folder ``<Full Name>_<participant id>_assignsubmission_file_/``
  holding the learner's files, or, flattened, that prefix on each file name. The learner is the
  participant id (the roster's ``moodle_id``), else the full name through the roster.

Identity comes from what the platform wrote, never from a name the learner chose: the zip's
outermost Moodle folder decides, and a file name inside it that looks like another learner's
entry is only a file name; Canvas's and a flattened Moodle name are read from their start, which
the platform writes. The roster (``intake.roster``) refuses a key two of its rows give to
different students; two learners of the zip (two user or participant ids) that map to one student
are refused together, with one line naming both. Nothing is guessed.

The assignment is the one named on the command line (``grade --from-zip`` wants it when the
course has several: the LMS's download is of one assignment, and a learner names their own file),
else the notebook's file name (``ex01_graph.ipynb``, ``ex01_graph-1.ipynb``, ``ex01_graph (2).ipynb``).
Of several notebooks of one student for one assignment the latest (the zip entry's time, then the
resubmission number) is kept; its time, the LMS's record of the upload (read as UTC: a zip stores
no zone), is written as its ``timestamp.txt``, so the late policy applies to it as to the
exchange's. Everything in the zip is data, bounded before it is read: an entry that is a symbolic
link or names ``..`` or an absolute path, a file that is not a notebook, not JSON or nested past
``bounds.MAX_DEPTH``, one that expands past the bounds (a zip bomb; each entry at most the
grader's notebook bound, ``bounds.MAX_NOTEBOOK_BYTES``), a name that maps to no student, each gets
a line in ``Unpacked.problems`` and is skipped; the rest are streamed, by this module, never by
``zipfile.extract``, under the scratch folder only, one entry in memory at a time. The zip itself
is only read.
"""

from __future__ import annotations

import os
import re
import stat
import zipfile
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path, PurePosixPath

from ..names import UnsafeId, check_id, terminal
from .bounds import MAX_NOTEBOOK_BYTES, json_problem
from .collected import timestamp_text
from .exchange import TIMESTAMP
from .roster import Roster, platform_id, read_roster, split_name

__all__ = ["Limits", "Unpacked", "Roster", "read_roster", "split_name", "unpack_lms_zip"]


@dataclass(frozen=True)
class Limits:
    """Bounds on what a zip may expand to: entries, bytes per file (the grader's notebook bound),
    bytes in all, and the expansion ratio of one entry (a notebook compresses about 3-10x; a
    bomb, 1000x)."""

    entries: int = 20_000
    file_bytes: int = MAX_NOTEBOOK_BYTES
    total_bytes: int = 2 * 1024**3
    ratio: float = 200.0


@dataclass
class Unpacked:
    """What :func:`unpack_lms_zip` placed: ``{(student, assignment): zip entry}``, the zip's time of
    each (``times``: the LMS's record of the upload, naive, as the zip stores it), one line per
    problem (nothing placed for it), and notes (Canvas's LATE marks); ``by_name``: those placed for
    a roster row matched by the display name alone (a learner can choose it: such a placement never
    replaces another submission, ``collected.keep_in_course``)."""

    placed: dict[tuple[str, str], str] = field(default_factory=dict)
    times: dict[tuple[str, str], datetime | None] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    by_name: set[tuple[str, str]] = field(default_factory=set)  # placed for a roster row by its name alone
    _by_name_entries: set[str] = field(default_factory=set)


# Canvas's "lastfirst" is lower-case letters and digits, of any script (a name may fold to nothing)
_CANVAS = re.compile(r"(?P<name>[^\W_]*)_(?:(?P<late>LATE)_)?(?P<uid>\d+)_(?P<sub>\d+)_(?P<file>.+)")
_MOODLE = re.compile(r"(?P<name>.+?)_(?P<pid>\d+)_assignsubmission_[a-z]+_(?P<file>.*)")
_MOODLE_MARK = re.compile(r"_\d+_assignsubmission_[a-z]+_")
_RESUBMITTED = re.compile(r"(?P<stem>.+?)(?:-(?P<n>\d+)| \((?P<p>\d+)\))?")


def _assignment_of(file_name: str, known: set[str]) -> tuple[str | None, int]:
    """The assignment a notebook's file name names (None: none) and its resubmission number."""
    stem = PurePosixPath(file_name).stem
    found = _RESUBMITTED.fullmatch(stem)
    base, number = found.group("stem"), int(found.group("n") or found.group("p") or 0)
    if stem in known:
        return stem, 0
    return (base, number) if base in known else (None, number)


def _refused(info: zipfile.ZipInfo) -> str | None:
    """Why an entry is not even looked at (None: it may be)."""
    name = info.filename
    if stat.S_ISLNK(info.external_attr >> 16):
        return "a symbolic link"
    parts = name.replace("\\", "/").split("/")
    if name.startswith(("/", "\\")) or re.match(r"[A-Za-z]:", name) or ".." in parts:
        return "a path outside the zip's folder"
    return None


def _stream_bounded(zf: zipfile.ZipFile, info: zipfile.ZipInfo, limits: Limits, budget: int, into: Path) -> int | str:
    """Copy the entry into the file ``into``; its size, or why not (``into`` then removed): bounds
    checked before reading on the sizes the zip declares, and again on what is really read (a bomb
    can lie about them). One chunk of 1 MiB is in memory at a time."""
    if info.file_size > limits.file_bytes or info.file_size > budget:
        return f"expands to {info.file_size} bytes (more than the bound)"
    if info.compress_size and info.file_size / info.compress_size > limits.ratio:
        return f"expands {info.file_size / info.compress_size:.0f} times (a zip bomb?)"
    cap, size = min(limits.file_bytes, budget), 0
    try:
        with zf.open(info) as f, open(into, "wb") as out:
            while chunk := f.read(1 << 20):
                size += len(chunk)
                if size > cap:
                    raise OverflowError
                out.write(chunk)
    except OverflowError:
        into.unlink(missing_ok=True)
        return "expands past the bound (its declared size is false: a zip bomb?)"
    except (zipfile.BadZipFile, OSError, EOFError, NotImplementedError, RuntimeError) as error:  # a corrupt entry
        into.unlink(missing_ok=True)
        return f"cannot be read ({type(error).__name__})"
    return size


@dataclass(frozen=True)
class _Learner:
    """Who the platform says an entry is by: ``platform`` ("canvas" or "moodle"), its id there, the
    display name it wrote, the learner's own file name, Canvas's LATE mark."""

    platform: str
    uid: str
    name: str
    file_name: str
    late: bool = False

    def said(self) -> str:
        who = "Canvas user" if self.platform == "canvas" else "Moodle participant"
        return f"{who} {self.uid} ({terminal(self.name)[:60]})"


def _learner_of(entry: str) -> _Learner | str:
    """Who wrote an entry, as the platform named it, or why it cannot be told. Moodle writes the
    learner's full name before the id, and a learner may choose their name: a name that holds
    Moodle's pattern twice could be read as either participant, so it is refused, never guessed."""
    parts = [p for p in entry.replace("\\", "/").split("/") if p]
    name = parts[-1] if parts else entry
    for folder in parts[:-1]:  # the outermost Moodle folder: Moodle made it; what is inside is the learner's
        if _MOODLE_MARK.search(folder):
            if len(_MOODLE_MARK.findall(folder)) > 1:
                return "a Moodle folder name that names two participants: who wrote it cannot be told"
            found = _MOODLE.fullmatch(folder)
            if found and not found.group("file"):
                return _Learner("moodle", platform_id(found.group("pid")), found.group("name"), name)
    moodle = _MOODLE.fullmatch(name)
    if moodle and moodle.group("file"):  # flattened: "<Full Name>_<id>_assignsubmission_file_<file>"
        if len(_MOODLE_MARK.findall(name)) > 1:
            return "a Moodle file name that names two participants: who wrote it cannot be told"
        return _Learner("moodle", platform_id(moodle.group("pid")), moodle.group("name"), moodle.group("file"))
    canvas = _CANVAS.fullmatch(name)
    if canvas:
        return _Learner(
            "canvas",
            platform_id(canvas.group("uid")),
            canvas.group("name"),
            canvas.group("file"),
            bool(canvas.group("late")),
        )
    return "not named as Canvas or Moodle name submission files"


def _student_of(learner: _Learner, roster: Roster | None) -> tuple[str | None, str]:
    """The student id of ``learner`` (None, and why, when there is none or it is not one person)."""
    if roster is None:
        if learner.platform == "canvas":
            return learner.uid, ""
        return None, f"{learner.said()} is not in the roster (Moodle's names need --roster)"
    student, why = roster.find(learner.platform, learner.uid, learner.name)
    if student is not None and ("student", student) in roster.ambiguous:
        rows = " and ".join(roster.ambiguous[("student", student)])
        return None, f"{learner.said()} is not one person: the roster gives student id {terminal(student)} to {rows}"
    return student, "" if student else f"{learner.said()} {why}"


def unpack_lms_zip(
    zip_path: Path,
    scratch: Path,
    assignments: dict[str, str],
    roster: Roster | None = None,
    assignment: str | None = None,
    limits: Limits = Limits(),
) -> Unpacked:
    """Place each notebook of an LMS bulk download at ``scratch/<student>/<assignment>/<notebook>``
    (nbgrader's layout, ready for ``grade_class``).

    Args:
        assignments: ``{assignment id: notebook file name}`` of the course (from ``solutions/``).
        assignment: every notebook is for this assignment (otherwise the file name says).

    Returns:
        :class:`Unpacked`: what was placed, and a line for each entry that was not.

    Raises:
        zipfile.BadZipFile: the file is not a zip at all.
        ValueError: its end record states more than ``limits.entries`` entries (read before any
            entry is: zipfile would hold them all in memory).
    """
    unpacked = Unpacked()
    # what its end record states, before zipfile reads (and holds) every entry of the central directory:
    # the count, and the directory's size, which bounds how many entries zipfile would really read
    with open(zip_path, "rb") as f:
        end = zipfile._EndRecData(f)
    if end and (end[zipfile._ECD_ENTRIES_TOTAL] > limits.entries or end[zipfile._ECD_SIZE] > limits.entries * 1024):
        raise ValueError(
            f"{zip_path} holds {end[zipfile._ECD_ENTRIES_TOTAL]} entries in a directory of {end[zipfile._ECD_SIZE]} "
            f"bytes, more than {limits.entries} entries: split the download"
        )
    with zipfile.ZipFile(zip_path) as zf:
        infos = zf.infolist()
        if len(infos) > limits.entries:
            unpacked.problems.append(f"{len(infos)} entries: only the first {limits.entries} are read")
            infos = infos[: limits.entries]
        candidates = _candidates(infos, roster, assignments, assignment, unpacked)
        _place(zf, candidates, scratch, assignments, limits, unpacked)
    return unpacked


def _candidates(infos, roster, assignments, assignment, unpacked) -> list:
    """The entries that may be placed, as ``(info, learner, student, assignment, number)``, every
    other entry one line in ``unpacked.problems``; nothing is read yet."""
    found, by_student = [], defaultdict(set)
    for info in infos:
        shown = terminal(info.filename)[:200]
        if info.is_dir():
            continue
        if why := _refused(info):
            unpacked.problems.append(f"{shown}: refused, {why}")
            continue
        learner = _learner_of(info.filename)
        if isinstance(learner, str):
            unpacked.problems.append(f"{shown}: {learner}")
            continue
        if not learner.file_name.lower().endswith(".ipynb"):
            unpacked.problems.append(f"{shown}: not a notebook (.ipynb), skipped")
            continue
        student, why = _student_of(learner, roster)
        if student is None:
            unpacked.problems.append(f"{shown}: {why}")
            continue
        try:
            check_id(student, "student id")
        except UnsafeId as error:
            unpacked.problems.append(f"{shown}: {error}")
            continue
        target, number = (assignment, 0) if assignment else _assignment_of(learner.file_name, set(assignments))
        if target is None:
            unpacked.problems.append(f"{shown}: names no assignment of the course (give --assignment)")
            continue
        if roster is not None and (learner.platform, learner.uid) not in roster.keys:
            unpacked._by_name_entries.add(info.filename)
            unpacked.notes.append(
                f"{shown}: {learner.said()} matched {terminal(student)} by name only (a roster id column makes it sure)"
            )
        found.append((info, learner, student, target, number))
        by_student[student].add((learner.platform, learner.uid, learner.name))
    clashes = {s: sorted(who) for s, who in by_student.items() if len({(p, u) for p, u, _ in who}) > 1}
    for student, who in sorted(clashes.items()):
        people = " and ".join(_Learner(p, u, n, "").said() for p, u, n in who)
        unpacked.problems.append(
            f"refused: {people} both map to student {terminal(student)}: nothing of theirs is graded "
            "(give the roster their ids: canvas_id or moodle_id)"
        )
    return [c for c in found if c[2] not in clashes]


def _place(zf, candidates, scratch: Path, assignments, limits: Limits, unpacked: Unpacked) -> None:
    """Stream the latest notebook of each (student, assignment) into ``scratch``, checked on the way."""
    chosen: dict[tuple[str, str], tuple] = {}
    budget = limits.total_bytes
    # newest first: an older one is read only when every newer one of the learner was refused
    for info, learner, student, target, _ in sorted(
        candidates, key=lambda c: (c[0].date_time, c[4], c[0].filename), reverse=True
    ):
        shown, key = terminal(info.filename)[:200], (student, target)
        if key in chosen:
            unpacked.notes.append(f"{shown}: an older submission of {terminal(student)} for {target}, not graded")
            continue
        folder = scratch / student / target
        folder.mkdir(parents=True, exist_ok=True)
        partial = folder / ".entry.partial"
        size = _stream_bounded(zf, info, limits, budget, partial)
        if isinstance(size, str):
            unpacked.problems.append(f"{shown}: refused, {size}")
            _drop_empty(folder)
            continue
        budget -= size
        problem = json_problem(partial.read_bytes())
        if problem:
            partial.unlink()
            _drop_empty(folder)
            unpacked.problems.append(f"{shown}: not a notebook ({problem}), skipped")
            continue
        os.replace(partial, folder / assignments[target])
        chosen[key] = info
        unpacked.placed[key] = info.filename
        unpacked.times[key] = _time_of(info)
        if unpacked.times[key] is not None:  # the LMS's record of the upload: the late penalty uses it
            (folder / TIMESTAMP).write_text(timestamp_text(unpacked.times[key]), encoding="utf-8")
        if info.filename in unpacked._by_name_entries:
            unpacked.by_name.add(key)
        if learner.late:
            unpacked.notes.append(f"{terminal(student)}/{target}: Canvas marks it LATE")
    unpacked.placed = dict(sorted(unpacked.placed.items()))


def _time_of(info: zipfile.ZipInfo) -> datetime | None:
    """The entry's time as the zip stores it (no zone), None when it is no date (a crafted month 0)."""
    try:
        return datetime(*info.date_time)
    except (ValueError, TypeError):
        return None


def _drop_empty(folder: Path) -> None:
    """Remove ``folder`` and its student's folder when nothing was placed in them."""
    for path in (folder, folder.parent):
        try:
            path.rmdir()
        except OSError:
            return
