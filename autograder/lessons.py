"""Where the course teaches a topic: ``lesson(notebook, heading_word)`` -> ``"notebook#anchor"``,
and the fragment a link to it carries in JupyterLab (``lab_fragment``: the heading cell's id).

The anchor is JupyterLab's id of a markdown heading: its text as rendered (no backticks, no ``**``,
link text only) with spaces replaced by ``-``, so ``## 10. Pitfalls: the graph was not built``
becomes ``#10.-Pitfalls:-the-graph-was-not-built``. Headings are looked up when asked, so a
renumbered section keeps its link.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path

__all__ = [
    "COURSE_ROOT",
    "LEARNER_FOLDER",
    "learner_root",
    "lesson",
    "heading_ids",
    "heading_cells",
    "lab_fragment",
    "anchor_of_cell",
]

COURSE_ROOT = Path(__file__).resolve().parents[1]
# The learner's own copies of notebooks/ and exercises/ (``python -m autograder workspace``, which
# ``./course lab`` runs): ignored by git, so a learner's answers never touch the committed files.
LEARNER_FOLDER = COURSE_ROOT / "my-work"


def learner_root(folder: str | Path) -> Path:
    """The root of the course as seen from ``folder``: the learner's folder when ``folder`` is
    inside it (links from a learner's notebook go to the learner's copies), else the repository."""
    here = Path(folder).resolve()
    return LEARNER_FOLDER if here.is_relative_to(LEARNER_FOLDER.resolve()) else COURSE_ROOT


def lesson(notebook: str, heading_word: str) -> str:
    """``notebook#anchor`` (``notebook`` relative to the repository root), the anchor being the id
    of the first heading that contains ``heading_word`` (case-insensitive); ``heading_word`` itself
    while the notebook or that heading does not exist yet. Never raises."""
    try:
        path = COURSE_ROOT / notebook
        ids = heading_ids(path, path.stat().st_mtime_ns)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        ids = ()
    word = heading_word.lower().replace("-", " ")
    anchor = next((i for i in ids if word in i.lower().replace("-", " ")), None)
    return f"{notebook}#{anchor or heading_word.replace(' ', '-')}"


def heading_ids(path: Path, mtime_ns: int = 0) -> tuple[str, ...]:
    """JupyterLab's anchor ids of the markdown headings of the notebook at ``path``, in order
    (``mtime_ns`` only keys the cache)."""
    return tuple(anchor for anchor, _ in heading_cells(path, mtime_ns))


@lru_cache(maxsize=32)
def heading_cells(path: Path, mtime_ns: int = 0) -> tuple[tuple[str, str], ...]:
    """``(anchor id, cell id)`` of each markdown heading of the notebook at ``path``, in order: the
    id JupyterLab gives the heading, and the nbformat id of the cell it is in ("" for a notebook
    older than nbformat 4.5). ``mtime_ns`` only keys the cache."""
    found = []
    for cell in json.loads(Path(path).read_text(encoding="utf-8"))["cells"]:
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else source
        for line in source.splitlines() if cell.get("cell_type") == "markdown" else ():
            heading = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
            if heading:
                text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading[1])  # [text](url) -> text
                found.append((re.sub(r"[`*]", "", text).replace(" ", "-"), str(cell.get("id", ""))))
    return tuple(found)


def lab_fragment(notebook: str, anchor: str) -> str:
    """The URL fragment that makes JupyterLab open ``notebook`` (relative to the repository root)
    at its heading ``anchor``: ``#cell-id=<the heading cell's id>``. JupyterLab (4.6) applies a
    fragment as soon as the notebook's cells exist; a bare ``#anchor`` or ``#heading=anchor`` is
    looked for among headings already rendered, which a notebook just opened has not (it then
    stays at its first cell), while a cell id is known at once. ``#anchor`` when the notebook or
    its heading is not found."""
    try:
        path = COURSE_ROOT / notebook
        cells = dict(heading_cells(path, path.stat().st_mtime_ns))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        cells = {}
    return f"#cell-id={cells[anchor]}" if cells.get(anchor) else f"#{anchor}"


def anchor_of_cell(path: Path, cell_id: str) -> str | None:
    """The anchor id of the first heading in the cell ``cell_id`` of the notebook at ``path``, or
    None (the course site turns a ``#cell-id=`` link into its page's section anchor)."""
    return next((anchor for anchor, cell in heading_cells(path, path.stat().st_mtime_ns) if cell == cell_id), None)
