"""Generate the learner versions (``exercises/``) from the instructor sources (``solutions/``)
with nbgrader's own ``generate_assignment``, and tell whether the committed ones are stale."""

from __future__ import annotations

import tempfile
from pathlib import Path

import nbformat

from ...lessons import COURSE_ROOT
from .cli import nbgrader

__all__ = ["generate", "stale"]


def generate(release_dir: Path | None = None, root: Path = COURSE_ROOT) -> Path:
    """Run ``nbgrader generate_assignment --force`` for every assignment, writing to
    ``release_dir`` (default ``root/exercises``). The gradebook nbgrader needs for this lives in
    a temporary folder, so nothing else in the course changes.

    Returns:
        The release folder.

    Raises:
        subprocess.CalledProcessError: nbgrader failed (its output is in the exception).
    """
    release_dir = Path(release_dir or root / "exercises").resolve()
    with tempfile.TemporaryDirectory() as tmp:
        # one nbgrader process for all of them ("*" is nbgrader's own wildcard on assignment ids): one
        # start-up of nbgrader and its imports instead of fourteen
        nbgrader(
            root,
            "generate_assignment",
            "*",
            "--force",
            "--log-level=WARN",
            f"--CourseDirectory.release_directory={release_dir}",
            f"--CourseDirectory.db_url=sqlite:///{tmp}/gradebook.db",
        )
    return release_dir


def _cells(path: Path) -> list[tuple]:
    nb = nbformat.read(path, as_version=4)
    return [(c.cell_type, c.source, c.metadata.get("nbgrader")) for c in nb.cells]


def stale(root: Path = COURSE_ROOT) -> list[str]:
    """Release notebooks in ``root/exercises`` that differ from a fresh generation (or are
    missing or extra), as paths relative to ``exercises/``; empty when all are up to date."""
    with tempfile.TemporaryDirectory() as tmp:
        fresh = generate(Path(tmp) / "release", root)
        want = {p.relative_to(fresh): p for p in fresh.rglob("*.ipynb")}
        have = {
            p.relative_to(root / "exercises"): p
            for p in (root / "exercises").rglob("*.ipynb")
            if ".ipynb_checkpoints" not in p.parts
        }
        return sorted(
            str(rel)
            for rel in want.keys() | have.keys()
            if rel not in want or rel not in have or _cells(want[rel]) != _cells(have[rel])
        )
