"""Does every lesson open with its optional depth folded? A lesson's "Going deeper: ..." section is
opened by a markdown cell holding only that heading; the cell carries JupyterLab's
``jp-MarkdownHeadingCollapsed`` metadata, so JupyterLab opens the notebook with the section
collapsed (the site folds it too: ``site/course_site.py``, tests/test_site.py)."""

import re
from pathlib import Path

import nbformat
import pytest

REPO = Path(__file__).resolve().parents[1]
LESSONS = sorted(p for p in REPO.glob("notebooks/[0-9][0-9]_*.ipynb") if not p.name.startswith("00"))
GOING_DEEPER = re.compile(r"^#{1,6}\s+going deeper\b", re.I | re.M)
HEADING_ONLY = re.compile(r"\s*#{1,6}\s+[^\n]*\s*")


def unfolded_going_deeper(nb) -> list[str]:
    """The "Going deeper" heading cells of ``nb`` that JupyterLab would not open collapsed: the
    metadata is missing, or the cell holds more than the heading (its other lines would show)."""
    problems = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "markdown" or not GOING_DEEPER.search(cell.source):
            continue
        first = cell.source.strip().splitlines()[0]
        if cell.metadata.get("jp-MarkdownHeadingCollapsed") is not True:
            problems.append(f"cell {index} ({first!r}): no jp-MarkdownHeadingCollapsed: true")
        if not HEADING_ONLY.fullmatch(cell.source):
            problems.append(f"cell {index} ({first!r}): holds more than its heading")
    return problems


def test_the_check_finds_a_heading_that_would_open_unfolded():
    """Does the check flag a heading cell without the metadata, or with text under the heading, and
    accept a folded one?"""
    cell = nbformat.v4.new_markdown_cell
    bare = nbformat.v4.new_notebook(cells=[cell("## Going deeper: internals")])
    crowded = nbformat.v4.new_notebook(
        cells=[cell("## Going deeper: x\n\nText.", metadata={"jp-MarkdownHeadingCollapsed": True})]
    )
    folded = nbformat.v4.new_notebook(
        cells=[cell("## Going deeper: x\n", metadata={"jp-MarkdownHeadingCollapsed": True}), cell("Text.")]
    )
    assert len(unfolded_going_deeper(bare)) == 1
    assert len(unfolded_going_deeper(crowded)) == 1
    assert unfolded_going_deeper(folded) == []


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda p: p.stem)
def test_every_going_deeper_heading_opens_collapsed_in_jupyterlab(lesson):
    assert unfolded_going_deeper(nbformat.read(lesson, as_version=4)) == []
