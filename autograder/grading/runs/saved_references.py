"""References once: each assignment's solution records, saved as JSON and loaded instead of re-run.

``python -m autograder references --out refs.json`` runs every solution in ``solutions/`` once in
the sandbox (``grade_one.solution_records``) and writes::

    {"format": "autograder references 1",
     "course_version": "0.1.0+records 3f2a…",
     "assignments": {"ex01_graph": {"notebook": "ex01_graph.ipynb", "sha256": "…",
                                    "records": {"q1_check": [record, …], …}},
                     "ex02_…": {"notebook": "…", "sha256": "…", "fails": "the solution fails …"}}}

Records are :func:`values.encode_record`'s JSON, never pickles. ``grade --references refs.json``
(and ``grade-one``) load them instead of running the solutions; an assignment whose solution
notebook no longer has the saved hash, or a file saved by a grader whose records code differs
(``course_version``), refuses to grade with a message that says how to rebuild the file.

Saved references are complete or refused: each assignment's entry holds the SHA-256 of its
records as written (``records_sha256``), and every test cell of its solution must have records,
a cell with a hidden test among them a hidden one. A file cut short, edited by hand or missing a
question's records refuses to grade (a question judged against no record, or against its visible
checks only, would pass answers that the hidden test fails).
"""

from __future__ import annotations

import hashlib
import json
import os
from concurrent.futures import ThreadPoolExecutor
from importlib import metadata
from pathlib import Path

import nbformat

from ..judge.assemble import HIDDEN_TESTS, grade_id, is_test
from ..judge.grade_one import SolutionFails, solution_records
from ..sandbox.container import extras_for
from ..sandbox.limits import Limits
from ..sandbox.values import decode_record, encode_record
from .batch import load_sources
from .warm import _Sandboxes

__all__ = [
    "FORMAT", "StaleReferences", "course_version", "notebook_hash", "build", "entry", "document", "write",
    "SavedReferences",
]  # fmt: skip

FORMAT = "autograder references 1"
REBUILD = "rebuild them: python -m autograder references --out {path}"

# The modules whose code makes a record: when they change, saved records may no longer be what a
# solution run would give today, so the version names their digest as well as the package's.
_RECORD_MAKERS = ("check/__init__.py", "check/checked.py", "grading/sandbox/values.py")


class StaleReferences(ValueError):
    """Saved references that do not belong to these solutions or this grader (the message says
    which assignment and how to rebuild them)."""


def course_version() -> str:
    """``"<package version>+records <digest>"``: the autograder's version and a digest of the
    code that makes and encodes records (``check/__init__.py``, ``check/checked.py``, ``grading/sandbox/values.py``)."""
    try:
        version = metadata.version("autograder")
    except metadata.PackageNotFoundError:  # run from a checkout that pip never installed
        version = "unknown"
    package = Path(__file__).resolve().parents[2]
    digest = hashlib.sha256()
    for name in _RECORD_MAKERS:
        digest.update((package / name).read_bytes())
    return f"{version}+records {digest.hexdigest()[:12]}"


def notebook_hash(path: Path) -> str:
    """The SHA-256 of a solution notebook's bytes (hex)."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def build(solutions: Path, limits: Limits = Limits(), sandboxed: bool = True, jobs: int | None = None) -> dict:
    """Run each assignment's solution once (in ``jobs`` sandboxes) and return the JSON document
    described in the module docstring. A solution that fails its own tests is saved as
    ``"fails"`` (its submissions are then "not graded", as in a class run).

    Raises:
        FileNotFoundError: ``solutions`` is not a folder.
        SandboxError: the sandbox could not run a solution at all.
    """
    if not solutions.is_dir():
        raise FileNotFoundError(f"not a folder: {solutions}")
    sources = load_sources(solutions)
    sandboxes = _Sandboxes(limits, sandboxed, extras_for(c.source for _, nb in sources.values() for c in nb.cells))

    def run(assignment: str) -> dict:
        name, source = sources[assignment]
        try:
            return entry(solutions, assignment, name, solution_records(source, sandboxes.get(), limits))
        except SolutionFails as error:
            return entry(solutions, assignment, name, fails=str(error))

    try:
        with ThreadPoolExecutor(max_workers=jobs or os.cpu_count() or 1) as pool:
            entries = dict(zip(sources, pool.map(run, sources)))
    finally:
        sandboxes.close()
    return document(entries)


def entry(solutions: Path, assignment: str, name: str, records: dict | None = None, fails: str = "") -> dict:
    """One assignment's entry of the document: its solution notebook's name and SHA-256, and its
    records (``{test grade_id: [Checked, ...]}``) or why its solution fails its own tests."""
    saved = {"notebook": name, "sha256": notebook_hash(solutions / assignment / name)}
    if records is None:
        return {**saved, "fails": fails}
    encoded = {cell: [encode_record(r) for r in rs] for cell, rs in records.items()}
    return {**saved, "records": encoded, "records_sha256": _records_hash(encoded)}


def document(entries: dict) -> dict:
    """The JSON document of ``{assignment: entry}`` (:func:`entry`) for this grader's version."""
    return {"format": FORMAT, "course_version": course_version(), "assignments": entries}


def _records_hash(encoded) -> str:
    """The SHA-256 of an assignment's encoded records, as canonical JSON (sorted keys)."""
    return hashlib.sha256(json.dumps(encoded, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def write(document: dict, path: Path) -> None:
    """Write ``document`` to ``path`` atomically (a reader never sees half a file)."""
    partial = path.with_name(path.name + ".partial")
    partial.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    partial.replace(path)


class SavedReferences:
    """References loaded from a file that :func:`build` wrote, checked against ``solutions``."""

    def __init__(self, document: dict, path: Path, solutions: Path):
        self.document, self.path, self.solutions = document, path, solutions

    @classmethod
    def load(cls, path: Path, solutions: Path) -> SavedReferences:
        """Read ``path``; nothing is checked against the solutions until :meth:`check`.

        Raises:
            FileNotFoundError: no such file.
            StaleReferences: not such a file, or saved by a grader whose records code differs.
        """
        try:
            document = json.loads(Path(path).read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            raise StaleReferences(f"{path} is not a references file ({error}); {cls._rebuild(path)}") from None
        if not isinstance(document, dict) or document.get("format") != FORMAT:
            raise StaleReferences(f"{path} is not a references file of this grader; {cls._rebuild(path)}")
        if document.get("course_version") != course_version():
            raise StaleReferences(
                f"{path} was saved by grader {document.get('course_version')!r}, this one is {course_version()!r}; "
                + cls._rebuild(path)
            )
        return cls(document, Path(path), solutions)

    @staticmethod
    def _rebuild(path: Path) -> str:
        return REBUILD.format(path=path)

    def _entry(self, assignment: str) -> dict:
        entry = self.document.get("assignments", {}).get(assignment)
        if not isinstance(entry, dict) or not isinstance(entry.get("notebook"), str):
            raise StaleReferences(f"{self.path} holds no references for {assignment}; {self._rebuild(self.path)}")
        notebook = self.solutions / assignment / Path(entry["notebook"]).name
        if not notebook.is_file() or notebook_hash(notebook) != entry.get("sha256"):
            raise StaleReferences(
                f"the solution of {assignment} ({notebook}) changed since {self.path} was saved; "
                + self._rebuild(self.path)
            )
        return entry

    def check(self, assignments) -> None:
        """Refuse before anything is graded: every one of ``assignments`` must have references
        saved from its solution notebook as it is now.

        Raises:
            StaleReferences: one does not (the first found, with how to rebuild).
        """
        for assignment in sorted(assignments):
            try:
                self.records(assignment)
            except SolutionFails:
                pass  # graded as "not graded", as in a class run

    def records(self, assignment: str) -> dict[str, list]:
        """``{test grade_id: [Checked, ...]}``, as :func:`grade_one.solution_records` gives.

        Raises:
            StaleReferences: no references for it, or its solution changed since.
            SolutionFails: the solution failed its own tests when the references were built.
        """
        entry = self._entry(assignment)
        if "fails" in entry:
            raise SolutionFails(str(entry["fails"]))
        if not isinstance(entry.get("records"), dict) or entry.get("records_sha256") != _records_hash(entry["records"]):
            raise StaleReferences(
                f"{self.path}'s records for {assignment} are not those the references command wrote (cut short or "
                f"edited); {self._rebuild(self.path)}"
            )
        try:
            records = {str(cell): [decode_record(r) for r in rs] for cell, rs in entry["records"].items()}
        except (ValueError, TypeError, KeyError, RuntimeError, AttributeError) as error:
            raise StaleReferences(
                f"{self.path} holds unreadable records for {assignment} ({error}); {self._rebuild(self.path)}"
            ) from None
        source = nbformat.read(self.solutions / assignment / Path(entry["notebook"]).name, as_version=4)
        for cell in source.cells:
            if not is_test(cell):
                continue
            mine = records.get(grade_id(cell), [])
            hidden = HIDDEN_TESTS.search(cell.source) is not None
            if not mine or (hidden and not any(r.options.get("hidden") for r in mine)):
                raise StaleReferences(
                    f"{self.path} holds no {'hidden ' if mine else ''}records for {assignment}'s {grade_id(cell)}: "
                    f"incomplete references are refused; {self._rebuild(self.path)}"
                )
        return records
