"""``python -m autograder workspace``: the learner's own copies of ``notebooks/`` and ``exercises/``.

``./course lab`` runs it before JupyterLab starts, and opens the start page from the copies. The
folder (``my-work/``, ignored by git) is made on the first start; later starts copy what it lacks
and never overwrite a learner's work: a release that changed since it was copied replaces the copy
only while the copy is still exactly what was copied (nothing of the learner's is lost); otherwise
the newer release is put beside it, as ``<name>.newer.ipynb``. ``my-work/.releases.json`` keeps the
SHA-256 of each release copied and of each newer release offered. The tests and the site read the
committed files, so a learner's clone still passes ``./course test`` and ``git pull`` never meets a
learner's answers.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
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


def _copy(source: Path, destination: Path) -> None:
    """Copy through a temporary file, so that an interrupted start never leaves half a notebook."""
    destination.parent.mkdir(parents=True, exist_ok=True)
    partial = destination.with_name(f".{destination.name}.partial")
    shutil.copyfile(source, partial)
    os.replace(partial, destination)


def sync(course: Path, mine: Path) -> list[str]:
    """Make or bring up to date the learner's folder ``mine`` from ``course``'s committed files.

    Returns:
        One line per thing the learner should know: a newer release offered beside their copy.
    Raises:
        NotADirectoryError: ``mine`` exists and is not a folder.
    """
    if mine.exists() and not mine.is_dir():
        raise NotADirectoryError(f"{mine} is not a folder: move it away, and the course makes your folder there")
    record_path = mine / RECORD
    try:
        record = json.loads(record_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        record = {}
    copied, offered = record.get("copied", {}), record.get("offered", {})
    said = []
    for name in _released(course):
        source, copy = course / name, mine / name
        release = digest(source)
        if not copy.exists() or (copy.is_file() and digest(copy) in (copied.get(name), release)):
            if not copy.exists() or copied.get(name) != release:
                _copy(source, copy)
            copied[name] = release
            continue
        if copied.get(name) == release:
            continue  # the learner's own work on the release they have
        beside = newer_name(copy)
        if beside.exists() and digest(beside) not in (offered.get(name), release):
            said.append(
                f"a newer release of {name} is in the course; you edited {beside.name}, so it was left as it is"
            )
            continue
        if not beside.exists() or digest(beside) != release:
            _copy(source, beside)
        offered[name] = release
        said.append(f"a newer release of {name} is beside your copy: {beside.relative_to(mine).as_posix()}")
    record_path.parent.mkdir(parents=True, exist_ok=True)
    record_path.write_text(json.dumps({"copied": copied, "offered": offered}, indent=1, sort_keys=True) + "\n")
    return said


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
