"""An LMS's bulk download, unpacked into nbgrader's layout in a scratch folder.

Two namings are understood (the LMS writes one zip per assignment):

- Canvas ("Download Submissions"): ``<lastfirst>_<user id>_<submission id>_<file name>``, with
  ``LATE_`` before the user id for a late submission; Canvas appends ``-1``, ``-2`` to a file name
  a learner submitted again. The student is the roster's row whose Canvas ``ID`` is the user id
  (without a roster: the user id itself).
- Moodle ("Download all submissions"): ``<Full Name>_<participant id>_assignsubmission_file_``
  as a folder holding the learner's files, or as the prefix of each file name. Moodle's names say
  no more than the learner's full name, so the roster maps it to a student id.

A roster is a CSV with a ``student_id`` column and ``canvas_id`` and/or ``name`` columns, or
Canvas's own gradebook export (``Student``, ``ID``, ``SIS Login ID``: the login is the student id).
Its names also become the learners' names in the gradebook (``store.student_names``), as data:
control characters dropped, each part at most ``MAX_NAME_PART`` characters.

The assignment is the one named on the command line, else the notebook's file name
(``ex01_graph.ipynb``, ``ex01_graph-1.ipynb``, ``ex01_graph (2).ipynb``). Of several notebooks of
one student for one assignment the latest (the zip entry's time, then the resubmission number)
is kept. Everything in the zip is data: an entry that is a symbolic link or names ``..`` or an
absolute path, a file that is not a notebook or not JSON, one that expands past the bounds
(a zip bomb), a name that maps to no student, each gets a line in ``Unpacked.problems`` and is
skipped; the rest are written, by this module, never by ``zipfile.extract``, under the scratch
folder only. The zip itself is only read.
"""

from __future__ import annotations

import csv
import json
import re
import stat
import unicodedata
import zipfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from ..names import UnsafeId, check_id, terminal, without_controls

__all__ = ["Limits", "Unpacked", "Roster", "read_roster", "split_name", "unpack_lms_zip"]


@dataclass(frozen=True)
class Limits:
    """Bounds on what a zip may expand to: entries, bytes per file, bytes in all, and the
    expansion ratio of one entry (a notebook compresses about 3-10x; a bomb, 1000x)."""

    entries: int = 20_000
    file_bytes: int = 64 * 1024**2
    total_bytes: int = 2 * 1024**3
    ratio: float = 200.0


@dataclass
class Unpacked:
    """What :func:`unpack_lms_zip` placed: ``{(student, assignment): zip entry}``, one line per
    problem (nothing placed for it), and notes (Canvas's LATE marks)."""

    placed: dict[tuple[str, str], str] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _squash(name: str) -> str:
    """A name as Canvas writes it into file names: lower case letters and digits only, accents off."""
    plain = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii")
    return re.sub(r"[^a-z0-9]", "", plain.lower())


@dataclass
class Roster:
    """Student ids by Canvas user id and by (squashed) full name, and each student's
    ``(first, last)`` name as the roster gives it (:func:`split_name`)."""

    by_canvas_id: dict[str, str] = field(default_factory=dict)
    by_name: dict[str, str] = field(default_factory=dict)
    names: dict[str, tuple[str, str]] = field(default_factory=dict)


MAX_NAME_PART = 100  # characters of a first or last name kept (a roster's names are data)


def _name_part(part: str) -> str:
    return " ".join(without_controls(part).split())[:MAX_NAME_PART]


def split_name(full: str) -> tuple[str, str]:
    """``(first, last)`` of a roster's name: ``"Lovelace, Ada"`` (Canvas's ``Student`` column) or
    ``"Ada Lovelace"`` (the last word is the last name); ``("", "")`` for an empty name."""
    if "," in full:
        last, _, first = full.partition(",")
    else:
        first, _, last = " ".join(without_controls(full).split()).rpartition(" ")  # one word: a last name
    return _name_part(first), _name_part(last)


def read_roster(path: Path) -> Roster:
    """Read a roster CSV (see the module docstring).

    Raises:
        ValueError: no ``student_id`` (or Canvas's ``SIS Login ID``) column.
    """
    roster = Roster()
    with open(path, newline="", encoding="utf-8-sig") as f:
        reader = csv.DictReader(f)
        columns = set(reader.fieldnames or [])
        canvas = {"Student", "SIS Login ID"} <= columns
        if not canvas and "student_id" not in columns:
            raise ValueError(f"{path}: a roster needs a student_id column (or is Canvas's gradebook export)")
        for row in reader:
            student = (row.get("SIS Login ID") if canvas else row.get("student_id")) or ""
            student = student.strip()
            if not student or (canvas and row.get("Student", "").strip() == "Points Possible"):
                continue
            canvas_id = (row.get("ID") if canvas else row.get("canvas_id")) or ""
            if canvas_id.strip():
                roster.by_canvas_id[canvas_id.strip()] = student
            name = (row.get("Student") if canvas else row.get("name")) or ""
            if name.strip():
                if "," in name:  # "Last, First": Canvas's file names and Moodle's folders read "lastfirst"
                    last, _, first = name.partition(",")
                    roster.by_name[_squash(last + first)] = student
                    roster.by_name[_squash(first + last)] = student
                roster.by_name[_squash(name)] = student
                roster.names[student] = split_name(name)
    return roster


_CANVAS = re.compile(r"(?P<name>[a-z0-9]+)_(?:(?P<late>LATE)_)?(?P<uid>\d+)_(?P<sub>\d+)_(?P<file>.+)")
_MOODLE = re.compile(r"(?P<name>.+?)_(?P<pid>\d+)_assignsubmission_[a-z]+_(?P<file>.*)")
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


def _read_bounded(zf: zipfile.ZipFile, info: zipfile.ZipInfo, limits: Limits, budget: int) -> bytes | str:
    """The entry's bytes, or why not: bounds checked on what is really read, not on the sizes
    the zip declares (a bomb can lie about them)."""
    if info.file_size > limits.file_bytes or info.file_size > budget:
        return f"expands to {info.file_size} bytes (more than the bound)"
    if info.compress_size and info.file_size / info.compress_size > limits.ratio:
        return f"expands {info.file_size / info.compress_size:.0f} times (a zip bomb?)"
    cap = min(limits.file_bytes, budget)
    chunks, size = [], 0
    with zf.open(info) as f:
        while chunk := f.read(1 << 20):
            size += len(chunk)
            if size > cap:
                return "expands past the bound (its declared size is false: a zip bomb?)"
            chunks.append(chunk)
    return b"".join(chunks)


def _student_of(entry: str, roster: Roster | None) -> tuple[str | None, str, str, bool]:
    """``(student id or None, the learner's file name, why not placed, late)`` of an entry."""
    parts = [p for p in entry.replace("\\", "/").split("/") if p]
    name = parts[-1] if parts else entry
    moodle = _MOODLE.fullmatch(name)
    if moodle and moodle.group("file"):  # flattened: "<Full Name>_<id>_assignsubmission_file_<file>"
        full, file_name = moodle.group("name"), moodle.group("file")
    else:  # a folder "<Full Name>_<id>_assignsubmission_file_/" holding the learner's files
        folders = [m for m in map(_MOODLE.fullmatch, reversed(parts[:-1])) if m]
        full, file_name = (folders[0].group("name"), name) if folders else (None, name)
    if full is not None:
        student = roster.by_name.get(_squash(full)) if roster else None
        return student, file_name, "" if student else f"Moodle name {full!r} is not in the roster (--roster)", False
    canvas = _CANVAS.fullmatch(name)
    if canvas:
        uid, late = canvas.group("uid"), bool(canvas.group("late"))
        if roster is None:
            return uid, canvas.group("file"), "", late
        student = roster.by_canvas_id.get(uid) or roster.by_name.get(canvas.group("name"))
        why = "" if student else f"Canvas user {uid} ({canvas.group('name')}) is not in the roster"
        return student, canvas.group("file"), why, late
    return None, name, "not named as Canvas or Moodle name submission files", False


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
    """
    unpacked = Unpacked()
    chosen: dict[tuple[str, str], tuple[tuple, zipfile.ZipInfo, bytes]] = {}
    budget = limits.total_bytes
    with zipfile.ZipFile(zip_path) as zf:
        infos = zf.infolist()
        if len(infos) > limits.entries:
            unpacked.problems.append(f"{len(infos)} entries: only the first {limits.entries} are read")
            infos = infos[: limits.entries]
        for info in infos:
            shown = terminal(info.filename)[:200]
            if info.is_dir():
                continue
            if why := _refused(info):
                unpacked.problems.append(f"{shown}: refused, {why}")
                continue
            student, file_name, why, late = _student_of(info.filename, roster)
            if not file_name.endswith(".ipynb"):
                unpacked.problems.append(f"{shown}: not a notebook (.ipynb), skipped")
                continue
            if student is None:
                unpacked.problems.append(f"{shown}: {why}")
                continue
            try:
                check_id(student, "student id")
            except UnsafeId as error:
                unpacked.problems.append(f"{shown}: {error}")
                continue
            target, number = (assignment, 0) if assignment else _assignment_of(file_name, set(assignments))
            if target is None:
                unpacked.problems.append(f"{shown}: names no assignment of the course (give --assignment)")
                continue
            data = _read_bounded(zf, info, limits, budget)
            if isinstance(data, str):
                unpacked.problems.append(f"{shown}: refused, {data}")
                continue
            budget -= len(data)
            try:
                json.loads(data)
            except ValueError as error:
                unpacked.problems.append(f"{shown}: not a notebook (not JSON: {type(error).__name__}), skipped")
                continue
            if late:
                unpacked.notes.append(f"{terminal(student)}/{target}: Canvas marks it LATE")
            rank = (info.date_time, number, info.filename)
            key = (student, target)
            if key in chosen and chosen[key][0] >= rank:
                unpacked.notes.append(f"{shown}: an older submission of {terminal(student)} for {target}, not graded")
                continue
            if key in chosen:
                unpacked.notes.append(
                    f"{terminal(chosen[key][1].filename)[:200]}: an older submission of {terminal(student)} "
                    f"for {target}, not graded"
                )
            chosen[key] = (rank, info, data)
    for (student, target), (_, info, data) in sorted(chosen.items()):
        folder = scratch / student / target
        folder.mkdir(parents=True, exist_ok=True)
        (folder / assignments[target]).write_bytes(data)
        unpacked.placed[(student, target)] = info.filename
    return unpacked
