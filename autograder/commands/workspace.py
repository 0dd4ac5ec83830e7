"""``python -m autograder workspace``: the learner's own copies of ``notebooks/`` and ``exercises/``.

``./course lab`` runs it before JupyterLab starts, and opens the start page from the copies. The
folder (``my-work/``, ignored by git) is made on the first start; later starts copy what it lacks
and never overwrite a learner's work: a release that changed since it was copied replaces the copy
only while the copy is still exactly what was copied (nothing of the learner's is lost); otherwise
the newer release is put beside it, as ``<name>.newer.ipynb``. ``my-work/.releases.json`` keeps the
SHA-256 of each release copied and of each newer release offered. The tests and the site read the
committed files, so a learner's clone still passes ``./course test`` and ``git pull`` never meets a
learner's answers.

Nothing on disk is the release because it is there: in a git clone the release is git's committed
file (``HEAD``), never the working tree, so answers typed into ``exercises/`` itself (opened from
JupyterLab's file browser, or a clone from before ``my-work/``) are the learner's work: copied into
``my-work/`` when the copy there is still the release, recorded as theirs, and never replaced by a
later ``git checkout -- exercises``. Outside a git clone (a downloaded folder) the working tree is
all there is. A file of the learner's where a release wants to put one (a file where a folder goes,
a folder where a file goes) is left as it is and said, one line each: the other files are placed
and the start goes on.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path

COPIED = ("notebooks", "exercises")
RECORD = ".releases.json"


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def newer_name(path: Path) -> Path:
    """Where the newer release of ``path`` is offered: ``ex01_graph.ipynb`` -> ``ex01_graph.newer.ipynb``."""
    return path.with_name(f"{path.stem}.newer{path.suffix}")


def _released(course: Path) -> list[str]:
    """The committed files to copy, relative to ``course`` (no checkpoints, no offered copies)."""
    found = []
    for top in COPIED:
        for path in sorted((course / top).rglob("*")):
            relative = path.relative_to(course)
            if path.is_file() and ".ipynb_checkpoints" not in relative.parts and ".newer." not in path.name:
                found.append(relative.as_posix())
    return found


def _git(course: Path, *arguments: str) -> bytes | None:
    try:
        done = subprocess.run(["git", "-C", str(course), *arguments], capture_output=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def _committed(course: Path) -> dict[str, str] | None:
    """``{path: git blob id}`` of the files under ``COPIED`` in ``HEAD``, when ``course`` is the top
    of a git clone (None otherwise: a downloaded folder, no git)."""
    top = _git(course, "rev-parse", "--show-toplevel")
    if top is None or Path(top.decode().strip()).resolve() != course.resolve():
        return None
    listing = _git(course, "ls-tree", "-r", "-z", "HEAD", "--", *COPIED)
    if listing is None:
        return None
    found = {}
    for entry in listing.decode("utf-8", "surrogateescape").split("\0"):
        meta, _, name = entry.partition("\t")
        fields = meta.split()
        if len(fields) == 3 and fields[1] == "blob" and ".ipynb_checkpoints" not in name and ".newer." not in name:
            found[name] = fields[2]
    return found


def _blob_id(data: bytes) -> str:
    """git's id of a blob holding ``data`` (SHA-1 of its header and bytes, as ``git hash-object``)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


class _Releases:
    """The release of each file: git's committed bytes in a clone, else the working tree's."""

    def __init__(self, course: Path):
        self.course, self.committed = course, _committed(course)

    def names(self) -> list[str]:
        return sorted(self.committed) if self.committed is not None else _released(self.course)

    def get(self, name: str) -> tuple[bytes, bytes | None]:
        """``(the release's bytes, the working tree's when they differ from it: a learner's answers)``."""
        path = self.course / name
        here = path.read_bytes() if path.is_file() and not path.is_symlink() else None
        if self.committed is None or (here is not None and _blob_id(here) == self.committed[name]):
            return (here if here is not None else b""), None
        blob = _git(self.course, "cat-file", "blob", self.committed[name])
        if blob is None:
            raise OSError(f"git could not read the committed {name}")
        return blob, here


def _write(data: bytes, destination: Path) -> None:
    """Write through a temporary file, so that an interrupted start never leaves half a notebook."""
    destination.parent.mkdir(parents=True, exist_ok=True)
    partial = destination.with_name(f".{destination.name}.partial")
    partial.write_bytes(data)
    os.replace(partial, destination)


def sync(course: Path, mine: Path) -> list[str]:
    """Make or bring up to date the learner's folder ``mine`` from ``course``'s committed files.

    Returns:
        One line per thing the learner should know: a newer release offered beside their copy,
        their answers found in the committed files, a file of theirs in a release's way.
    Raises:
        NotADirectoryError: ``mine`` exists and is not a folder.
    """
    if mine.exists() and not mine.is_dir():
        raise NotADirectoryError(f"{mine} is not a folder: move it away, and the course makes your folder there")
    record_path = mine / RECORD
    try:
        record = json.loads(record_path.read_text(encoding="utf-8"))
        copied, offered = dict(record.get("copied", {})), dict(record.get("offered", {}))
    except (OSError, ValueError, AttributeError, TypeError):
        copied, offered = {}, {}
    said, releases = [], _Releases(course)
    for name in releases.names():
        try:
            said += _sync_one(name, releases, mine, copied, offered)
        except OSError as error:  # this file alone: the others are placed, and the start goes on
            said.append(
                f"could not place {name} in your folder ({type(error).__name__}: {error.strerror or error}): "
                f"something of yours is in its way; move it, and the next start places it"
            )
    try:
        record_path.parent.mkdir(parents=True, exist_ok=True)
        record_path.write_text(json.dumps({"copied": copied, "offered": offered}, indent=1, sort_keys=True) + "\n")
    except OSError as error:
        said.append(f"could not write {RECORD} ({type(error).__name__}): your copies are kept; move what is there")
    return said


def _sync_one(name: str, releases: _Releases, mine: Path, copied: dict, offered: dict) -> list[str]:
    data, answered = releases.get(name)
    copy, release = mine / name, hashlib.sha256(data).hexdigest()
    untouched = not copy.exists() or (copy.is_file() and digest(copy) in (copied.get(name), release))
    if answered is not None and untouched:  # answers typed into the committed file: the learner's work
        _write(answered, copy)
        copied[name] = release
        return [f"your answers in {name} (a committed file) are now in your copy, {copy.name} in my-work/"]
    if untouched:
        if not copy.exists() or copied.get(name) != release:
            _write(data, copy)
        copied[name] = release
        return []
    if copied.get(name) == release:
        return []  # the learner's own work on the release they have
    beside = newer_name(copy)
    if beside.exists() and (not beside.is_file() or digest(beside) not in (offered.get(name), release)):
        return [f"a newer release of {name} is in the course; you edited {beside.name}, so it was left as it is"]
    if not beside.exists() or digest(beside) != release:
        _write(data, beside)
    offered[name] = release
    return [f"a newer release of {name} is beside your copy: {beside.relative_to(mine).as_posix()}"]


def run(args) -> int:
    from ..lessons import COURSE_ROOT, LEARNER_FOLDER

    course = Path(args.course).resolve() if args.course else COURSE_ROOT
    mine = course / LEARNER_FOLDER.name
    first = not mine.exists()
    try:
        said = sync(course, mine)
    except OSError as error:
        print(f"Could not make your folder {mine}: {error}")
        return 1
    if first:
        lessons = len(list((mine / "notebooks").glob("[0-9][0-9]_*.ipynb"))) - 1  # less the start page
        exercises = len(list((mine / "exercises").glob("*/*.ipynb")))
        print(
            f"Your work: made {mine.name}/, your own copies of the start page, the {lessons} lessons and the "
            f"{exercises} exercises (your answers stay there; notebooks/ and exercises/ stay as released)"
        )
    for line in said:
        print(f"Your work: {line}")
    return 0


def add(commands) -> None:
    workspace = commands.add_parser(
        "workspace", help="make or update the learner's own copies of the lessons and exercises (my-work/)"
    )
    workspace.add_argument("--course", help="the course folder (default: this package's)")
    workspace.set_defaults(run=run)
