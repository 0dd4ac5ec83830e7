"""An instructor's roster: who a zip's learners are, read as data that may be messy.

A roster is a CSV with a ``student_id`` column and ``canvas_id``, ``moodle_id`` (Moodle's
participant id, the number in its folder names) and/or ``name`` columns, or Canvas's own gradebook
export (``Student``, ``ID``, ``SIS Login ID``: the login is the student id), or Moodle's grading
worksheet (``Identifier`` = ``Participant 201``, ``Full name``, ``Email address``: the e-mail's
local part is the student id unless a ``student_id`` column is there; a local part that rows with
different e-mails share is no one's: a learner sets their own Moodle e-mail, so those rows keep
their full e-mails as ids, each with a line, and nobody loses a grade to a classmate's e-mail).

Identity is what the platform wrote: a Canvas user id or a Moodle participant id finds its row;
a name finds one only where the roster gives no id for that learner's platform. Nothing is
guessed: a key (an id, or a name as the platforms fold it: case, accents and spacing off) that
two rows give to different students is *ambiguous*, and a learner found through it is refused
with one line naming both rows; a name that folds to nothing maps to no one. A row that cannot
be read (no student id, an unsafe one) is one line in ``Roster.problems``; the other rows stand.
"""

from __future__ import annotations

import csv
import itertools
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

from ..names import UnsafeId, check_id, gradebook_name, terminal

__all__ = ["Roster", "read_roster", "split_name", "fold", "platform_id", "MAX_ROWS"]

MAX_ROWS = 100_000  # rows read from a roster (a class, not a census); more are one problem line
_MAX_BYTES = 64 * 1024**2  # a roster file larger than this is refused before it is read


def fold(name: str) -> str:
    """A name as the platforms write it into file names, to compare two spellings: case, accents,
    spaces and punctuation off, letters of every script kept (``"José  Ruiz"`` -> ``"joseruiz"``,
    ``"李雷"`` -> ``"李雷"``); "" when nothing is left."""
    plain = "".join(c for c in unicodedata.normalize("NFKD", name) if not unicodedata.combining(c))
    return "".join(c for c in plain.casefold() if c.isalnum())


def split_name(full: str) -> tuple[str, str]:
    """``(first, last)`` of a roster's name: ``"Lovelace, Ada"`` (Canvas's ``Student`` column) or
    ``"Ada Lovelace"`` (the last word is the last name); ``("", "")`` for an empty name. Each part
    as the gradebook may store it (``names.gradebook_name``: no control character, comma, quote or
    formula start, bounded)."""
    if "," in full:
        last, _, first = full.partition(",")
    else:
        first, _, last = " ".join(full.split()).rpartition(" ")  # one word: a last name
    return gradebook_name(first), gradebook_name(last)


@dataclass
class Roster:
    """Student ids by platform key: ``keys[("canvas", "101")]``, ``keys[("moodle", "201")]``,
    ``keys[("name", fold(name))]``; ``ambiguous[key]``: the rows (as said to the instructor) that
    give one key to different students; each student's ``(first, last)`` name; the platforms each
    student has an id on (``ids[student]``); one line per row not read."""

    keys: dict[tuple[str, str], str] = field(default_factory=dict)
    ambiguous: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    names: dict[str, tuple[str, str]] = field(default_factory=dict)
    ids: dict[str, set[str]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    _rows: dict[tuple[str, str], str] = field(default_factory=dict)

    def add(self, key: tuple[str, str], student: str, row: str) -> None:
        """Map ``key`` to ``student`` (``row``: how the instructor recognises the row)."""
        if not key[1]:
            return
        known = self.keys.get(key)
        if known is not None and known != student:
            self.ambiguous.setdefault(key, [self._rows[key]]).append(row)
        elif known is None:
            self.keys[key], self._rows[key] = student, row

    def find(self, platform: str, uid: str | None, name: str | None) -> tuple[str | None, str]:
        """``(student, "")`` for the learner a platform named by id ``uid`` (``platform``: "canvas" or
        "moodle") and display name ``name``, or ``(None, why)``. The id decides when the roster holds
        it; the name only for a row that gives no id of that platform."""
        for key in ((platform, uid or ""), ("name", fold(name or ""))):
            if key in self.ambiguous:
                return None, f"is not one person: the roster gives {_said(key)} to {' and '.join(self.ambiguous[key])}"
        student = self.keys.get((platform, uid or ""))
        if student is not None:
            return student, ""
        if name is not None and not fold(name):
            return None, f"has a name with no letters to match a roster's name by (give the roster a {platform}_id)"
        student = self.keys.get(("name", fold(name or "")))
        if student is not None and platform in self.ids.get(student, set()):
            return None, f"is not in the roster: its {terminal(student)} of that name has another {platform} id"
        return student, "" if student else "is not in the roster"


def platform_id(text: str) -> str:
    """A Canvas or Moodle id as a roster may hold it, as the zip writes it: ``"Participant 201"``
    (Moodle's worksheet, in any language) and a spreadsheet's ``"201.0"`` or ``"2.01E+02"`` are
    ``"201"``; "" for none."""
    text = text.strip()
    if found := re.fullmatch(r"\D*?(\d+)", text):  # "Participant 201", "Teilnehmer/in 201"
        return str(int(found.group(1)))
    try:
        number = float(text)
    except ValueError:
        return text
    return str(int(number)) if number.is_integer() and number >= 0 else text


def _said(key: tuple[str, str]) -> str:
    kind, value = key
    what = {"canvas": "Canvas user id", "moodle": "Moodle participant id", "name": "the name"}[kind]
    return f"{what} {terminal(value)[:100]!r}"


def _columns(fields: set[str]) -> dict[str, str | None]:
    """Which column holds what: Canvas's export, Moodle's worksheet, or this course's own."""
    if {"Student", "SIS Login ID"} <= fields:
        return {"student": "SIS Login ID", "canvas": "ID", "moodle": None, "name": "Student"}
    if "Identifier" in fields and "Full name" in fields:
        student = "student_id" if "student_id" in fields else "Email address"
        return {"student": student, "canvas": None, "moodle": "Identifier", "name": "Full name"}
    return {"student": "student_id", "canvas": "canvas_id", "moodle": "moodle_id", "name": "name"}


def read_roster(path: Path) -> Roster:
    """Read a roster CSV (see the module docstring); every row that cannot be read is one line in
    ``problems``.

    Raises:
        ValueError: no column that gives a student id, or a file too large to be a roster.
        OSError: it cannot be opened.
    """
    if Path(path).stat().st_size > _MAX_BYTES:
        raise ValueError(f"{path}: larger than {_MAX_BYTES // 1024**2} MiB, not a roster")
    roster, lines = Roster(), _text_lines(Path(path))
    reader = _reader(lines)
    if reader is None:
        raise ValueError(f"{path}: a roster needs a student_id column (or is Canvas's gradebook export)")
    columns = _columns({str(c).strip() for c in reader.fieldnames or []})
    if columns["student"] == "Email address":
        columns["shared"] = _shared_local_parts(lines, reader.reader.dialect.delimiter)
    seen: dict[str, tuple[str, str]] = {}  # student id: (what tells its row apart, how the row is said)
    for number in range(2, MAX_ROWS + 2):
        try:
            raw = next(reader)
        except StopIteration:
            break
        except csv.Error as error:  # a field past csv's limit, a stray quote: this row only
            roster.problems.append(f"roster line {number}: not read ({error})")
            continue
        row = {str(k).strip(): v if isinstance(v, str) else "" for k, v in raw.items() if k is not None}
        try:
            _add_row(roster, row, columns, number, seen)
        except UnsafeId as error:
            roster.problems.append(f"roster line {number}: {error}")
    else:
        try:
            more = next(reader, None) is not None
        except csv.Error:
            more = True
        if more:
            roster.problems.append(f"{path}: more than {MAX_ROWS} rows; the rest is not read")
    return roster


def _text_lines(path: Path) -> list[str]:
    """The roster's lines as text: UTF-8 (with or without a byte-order mark), else Windows-1252 (what
    Excel saves as "CSV" on Windows); a spreadsheet's ``sep=,`` first line left out."""
    data = path.read_bytes()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = data.decode("cp1252", errors="replace")
    lines = text.splitlines(keepends=True)
    return lines[1:] if lines and lines[0].strip().lower().startswith("sep=") else lines


def _reader(lines: list[str]) -> csv.DictReader | None:
    """A reader of ``lines`` with the delimiter (comma, semicolon or tab: a spreadsheet's locale
    decides) whose header names a student id column; None when none does."""
    for delimiter in (",", ";", "\t"):
        reader = csv.DictReader(iter(lines), delimiter=delimiter)
        try:
            fields = {str(c).strip() for c in reader.fieldnames or []}
        except csv.Error:
            continue
        if _columns(fields)["student"] in fields:
            return reader
    return None


def _add_row(roster: Roster, row: dict, columns: dict, number: int, seen: dict[str, tuple[str, str]]) -> None:
    name = row.get(columns["name"] or "", "").strip()
    if columns["name"] == "Student" and name in ("Points Possible", "Student, Test"):
        return  # Canvas's own extra rows
    student = row.get(columns["student"], "").strip()
    if columns["student"] == "Email address":
        email, student = student, student.partition("@")[0]
        if student.casefold() in columns.get("shared", ()):  # a learner sets their own e-mail: no guess
            roster.problems.append(
                f"roster line {number}: the e-mail's local part {terminal(student)!r} is given to more than one "
                f"row: this row's student id is its full e-mail, {terminal(email)[:100]!r}"
            )
            student = email
    if not student:
        return
    check_id(student, "student id")
    said = f"line {number} ({terminal(student)}{', ' + repr(terminal(name)[:60]) if name else ''})"
    if student in seen and seen[student][0] != _identity(row, columns):  # one student id, two people
        roster.ambiguous.setdefault(("student", student), [seen[student][1]]).append(said)
    seen.setdefault(student, (_identity(row, columns), said))
    for platform in ("canvas", "moodle"):
        uid = platform_id(row.get(columns[platform] or "", ""))
        if uid:
            roster.add((platform, uid), student, said)
            roster.ids.setdefault(student, set()).add(platform)
    if name:
        if "," in name:  # "Last, First": Canvas's file names and Moodle's folders read "lastfirst" or "first last"
            last, _, first = name.partition(",")
            roster.add(("name", fold(last + first)), student, said)
            roster.add(("name", fold(first + last)), student, said)
        else:  # "First Last": Moodle writes it so, Canvas as "lastfirst" (its sortable name)
            first, _, last = " ".join(name.split()).rpartition(" ")
            roster.add(("name", fold(name)), student, said)
            roster.add(("name", fold(last + first)), student, said)
        roster.names.setdefault(student, split_name(name))


def _shared_local_parts(lines: list[str], delimiter: str) -> set[str]:
    """The e-mail local parts (case folded) that rows of Moodle's worksheet with different e-mails
    share: a learner may set their Moodle e-mail to ``carol@elsewhere``, so for those rows the local
    part names no one, and each keeps its full e-mail (a stable id; nothing is lost silently)."""
    emails: dict[str, set[str]] = {}
    try:
        for row in itertools.islice(csv.DictReader(iter(lines), delimiter=delimiter), MAX_ROWS):
            email = str(row.get("Email address") or "").strip()
            if email:
                emails.setdefault(email.partition("@")[0].casefold(), set()).add(email.casefold())
    except csv.Error:  # the row is said when it is read; the shares found so far stand
        pass
    return {local for local, found in emails.items() if len(found) > 1}


def _identity(row: dict, columns: dict) -> str:
    """What tells two rows of one student id apart: its ids and its folded name."""
    return "|".join(fold(row.get(columns[k] or "", "")) for k in ("canvas", "moodle", "name"))
