"""Do the committed notebooks keep the machine that executed them private? No output of a lesson
(notebooks/) or of an exercise (exercises/) may hold an absolute path of that machine (/usr/...,
/root/..., /home/..., /tmp/..., ...) or a path into a virtual environment (.venv): such paths
tell nothing to a learner, differ on every machine and leak where the author worked. Tracebacks
are read too (ANSI colour codes removed first): a stored traceback is where such paths hide.
"""

import re
from pathlib import Path

import nbformat
import pytest

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted([*REPO.glob("notebooks/*.ipynb"), *REPO.glob("exercises/*/*.ipynb")])
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
# An absolute path under a machine's own folders, or any path through a .venv folder. A URL's
# path (https://host/usr/...) is not one: the character before the slash must not belong to a URL.
# A path into a .venv's installed packages (where tracebacks point; `.venv/bin/python`, a command the
# course tells learners to type, is no machine's path) is matched from the start of its token only
# (not from every character of a long output, which took minutes on the lessons' base64 images).
MACHINE_PATH = re.compile(
    r"(?<![\w.:/-])/(?:usr|root|home|tmp|var|opt|work|srv|mnt|Users|private|etc)/[^\s'\"<>),]*"
    r"|(?<![^\s'\"<>(])[^\s'\"<>(]*\.venv/lib/[^\s'\"<>),]*"
)


def machine_paths(text: str) -> list[str]:
    """The machine paths in ``text``, ANSI colour codes removed first."""
    return [m.group(0) for m in MACHINE_PATH.finditer(ANSI.sub("", text))]


def test_the_pattern_finds_what_it_must():
    """Does the pattern find the paths of a real traceback (also between colour codes), and leave
    relative paths and URLs alone?"""
    found = machine_paths(
        "\x1b[32m/usr/lib/python3/site-packages/torch/_tensor.py:581\x1b[39m, "
        'File "/root/x.py", /home/ada/c/x.py /tmp/ipykernel_1/2.py '
        ".venv/lib/python3.11/site-packages/torch/autograd/__init__.py"
    )
    assert len(found) == 5, found
    assert not machine_paths(
        "notebooks/05_inplace.ipynb#Pitfalls https://docs.pytorch.org/docs/stable/x.html "
        "../exercises/ex01_graph/ex01_graph.ipynb a/usr/b 1/2 `.venv/bin/python -m autograder progress`"
    )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: str(p.relative_to(REPO)))
def test_no_output_holds_a_machine_path(path):
    """Does no output (text, data, error message or traceback) of this notebook hold an absolute
    path of the machine that executed it, or a .venv path?"""
    problems = []
    for i, cell in enumerate(nbformat.read(path, as_version=4).cells):
        for out in cell.get("outputs", []):
            found = machine_paths("\n".join(_texts(out)))
            problems += [f"cell {i} ({out['output_type']}): {p}" for p in sorted(set(found))]
    assert not problems, "\n".join(problems)


def _texts(out) -> list[str]:
    """Every string an output holds (stream text, each MIME type's data, an error's name, message
    and traceback lines)."""
    texts = []

    def walk(value):
        if isinstance(value, str):
            texts.append(value)
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(dict(out))
    return texts
