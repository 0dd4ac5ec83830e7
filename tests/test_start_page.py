"""Does the start page lead a learner through the course, and does every stored drawing carry a
text version? (Static checks of the committed notebooks; tests/test_browser.py checks what the
browser shows.)"""

import re
from pathlib import Path

import nbformat
import pytest

REPO = Path(__file__).resolve().parents[1]
START = REPO / "notebooks" / "00_start.ipynb"
# The course in order: each lesson, then its exercise (COURSE.md section 2).
CHAPTERS = [
    ("01_dynamic_graph", "ex01_graph"),
    ("02_leaf_tensors", "ex02_leaves"),
    ("03_backward_consumes", "ex03_backward"),
    ("04_gradient_accumulation", "ex04_accumulation"),
    ("05_inplace_version_counter", "ex05_inplace"),
    ("06_detach_no_grad", "ex06_grad_modes"),
    ("07_graph_memory", "ex07_memory"),
    ("08_checkpointing", "ex08_checkpoint"),
    ("09_custom_functions", "ex09_functions"),
    ("10_hooks", "ex10_hooks"),
    ("11_mixed_precision", "ex11_mixed_precision"),
    ("12_higher_order", "ex12_higher_order"),
    ("13_compile", "ex13_compile"),
    ("14_distributed", "ex14_distributed"),
]
EXPECTED_LINKS = [
    target
    for lesson, exercise in CHAPTERS
    for target in (f"{lesson}.ipynb", f"../exercises/{exercise}/{exercise}.ipynb")
]


def markdown(path: Path) -> str:
    return "\n".join(c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "markdown")


def contents_rows() -> list[str]:
    """The rows of the start page's contents table that link to a notebook."""
    text = markdown(START)
    section = text[text.index("## Contents") :]
    return [line for line in section.splitlines() if line.startswith("|") and ".ipynb)" in line]


def test_start_page_links_every_lesson_and_exercise_in_order():
    """Does the contents table link, in order, each lesson followed by its exercise?"""
    links = [re.search(r"\]\(([^)]+\.ipynb)\)", row).group(1) for row in contents_rows()]
    assert links == EXPECTED_LINKS


def test_start_page_says_how_long_each_notebook_takes():
    """Does every row of the contents table give an estimated time in minutes?"""
    rows = contents_rows()
    assert rows and all(re.search(r"\|\s*\d+ min\s*\|\s*$", row) for row in rows), rows


def test_start_page_explains_how_to_check_an_answer():
    """Is there a "How to check an answer" section naming the answer cell, the check cell, OK and
    CheckFailed, and a restart-and-run-all before handing in?"""
    text = markdown(START)
    assert "## How to check an answer" in text
    section = text[text.index("## How to check an answer") :].split("\n## ")[0]
    for phrase in ("answer cell", "check cell", "`OK`", "CheckFailed", "Restart Kernel and Run All Cells"):
        assert phrase in section, phrase


def next_links(path: Path) -> list[str]:
    """The notebooks linked from a notebook's last cell, its "## Next" cell."""
    last = nbformat.read(path, as_version=4).cells[-1]
    assert last.cell_type == "markdown" and "## Next" in last.source, f"{path.name} does not end with '## Next'"
    return re.findall(r"\]\(([^)]+\.ipynb)\)", last.source)


@pytest.mark.parametrize("index", range(len(CHAPTERS)), ids=[lesson for lesson, _ in CHAPTERS])
def test_every_lesson_and_exercise_ends_with_links_to_what_comes_next(index):
    """Does each lesson end with a link to its exercise then the next lesson, and each exercise
    (source and release) with a link to the next lesson, so a learner never has to go back to the
    start page to continue?"""
    lesson, exercise = CHAPTERS[index]
    following = [f"{CHAPTERS[index + 1][0]}.ipynb"] if index + 1 < len(CHAPTERS) else []
    links = next_links(REPO / "notebooks" / f"{lesson}.ipynb")
    assert links[: 1 + len(following)] == [f"../exercises/{exercise}/{exercise}.ipynb", *following], links
    for folder in ("solutions", "exercises"):
        links = next_links(REPO / folder / exercise / f"{exercise}.ipynb")
        assert links[: len(following)] == [f"../../notebooks/{name}" for name in following], (folder, links)
        assert f"../../notebooks/{lesson}.ipynb" in links, (folder, links)


@pytest.mark.parametrize("path", sorted((REPO / "notebooks").glob("*.ipynb")), ids=lambda p: p.name)
def test_every_stored_drawing_has_a_text_version(path):
    """Is every SVG drawing stored in a lesson shown with a text version (draw()'s or Figure's HTML
    figure: alt text and a table of Nodes), for screen readers and readers without Graphviz?"""
    for i, cell in enumerate(nbformat.read(path, as_version=4).cells):
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if "image/svg+xml" in data:
                page = data.get("text/html", "")
                assert 'class="autograd-drawing"' in page and re.search(r'alt="[^"]+"', page), (
                    f"cell {i}: an SVG drawing without a text version (show it with draw() or Figure)"
                )
