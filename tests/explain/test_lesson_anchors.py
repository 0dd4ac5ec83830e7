"""Does every lesson the explainer links (each kind's, each family guess's, the unknown's, and each link its
explanations printed in the committed notebooks) open a section that exists: a heading of that lesson?"""

import re

import pytest

from autograder.explain.api_return import API_LESSONS
from autograder.explain.guess import _FAMILIES
from autograder.kinds.kind import LESSONS
from autograder.kinds.table import KINDS, UNKNOWN
from autograder.lessons import COURSE_ROOT, heading_ids, lesson


def _linked(where) -> str:
    return where if isinstance(where, str) else lesson(*where)


LINKS = {f"kind {name}": _linked(k.lesson) for name, k in {**KINDS, "unknown": UNKNOWN}.items()}
LINKS |= {
    f"guess {pattern}": _linked(notebook if isinstance(notebook, tuple) else (notebook, "Pitfalls"))
    for pattern, notebook, *_ in _FAMILIES
}
LINKS |= {f"api {call}": _linked(where) for call, where in API_LESSONS.items()}


def _printed_links() -> set[str]:
    """The lessons explanations printed in the committed notebooks' outputs link."""
    found = set()
    for path in sorted(COURSE_ROOT.glob("notebooks/*.ipynb")):
        found |= set(re.findall(r"Lesson: (notebooks/\d\d_\w+\.ipynb#[^\s\"\\<]+)", path.read_text(encoding="utf-8")))
    return found


@pytest.mark.parametrize("link", sorted(set(LINKS.values()) | _printed_links()))
def test_each_linked_anchor_is_a_heading_of_its_lesson(link):
    """Is the anchor a heading of the lesson (not the heading word lessons.lesson falls back to, nor a section that was
    renumbered since)? A URL is PyTorch's page and is left alone."""
    if re.match(r"[a-z]+://", link):
        return
    notebook, _, anchor = link.partition("#")
    assert (COURSE_ROOT / notebook).is_file(), link
    assert anchor in heading_ids(COURSE_ROOT / notebook), (link, [k for k, v in LINKS.items() if v == link])


def test_the_kinds_table_of_lessons_is_the_lessons_folder():
    """Does ``kinds.kind.LESSONS``, from which every kind and family guess names its lesson, hold each lesson of
    notebooks/ under its chapter number, and nothing else?"""
    on_disk = {int(p.name[:2]): f"notebooks/{p.name}" for p in COURSE_ROOT.glob("notebooks/[0-9][0-9]_*.ipynb")}
    assert LESSONS == on_disk
