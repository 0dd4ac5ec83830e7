"""Does every picture the committed notebooks show say what it shows, truly? Each image output of a lesson
(notebooks/) or an exercise (exercises/) must be a figure with alt text and a text version
(``autograder.draw.Figure``): the alt text neither missing nor generic ("plot", a matplotlib repr), and
agreeing with its text version, recomputed here from the numbers the text version shows: a plot's
alt text holds :func:`~autograder.explore.plot.describe_series` of each column of its table (start,
end, lowest and highest, where), a drawing's the count of Nodes and saved tensors its table lists, a
grid's its largest entry, a timeline's every bar. A screen reader's user and a sighted reader then
read the same facts."""

from __future__ import annotations

import html
import re
from pathlib import Path

import nbformat
import pytest

from autograder.explore.plot import describe_series

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted([*REPO.glob("notebooks/*.ipynb"), *REPO.glob("exercises/*/*.ipynb")])
GENERIC = {"image", "figure", "plot", "graph", "chart", "picture", "drawing", "diagram", "output", "svg", "png"}
FIGURE = re.compile(r'<figure class="autograd-drawing">.*?</figure>', re.DOTALL)
ALT = re.compile(r'<img [^>]*?alt="([^"]*)"')
SUMMARY = re.compile(r"<summary>(.*?)</summary>", re.DOTALL)
ROW = re.compile(r"<tr>(.*?)</tr>", re.DOTALL)
CELL = re.compile(r"<t[hd][^>]*>(.*?)</t[hd]>", re.DOTALL)


def _table(figure: str) -> list[list[str]]:
    """The text version's table: its header row, then its rows (cells as text)."""
    return [[html.unescape(c) for c in CELL.findall(row)] for row in ROW.findall(figure)]


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def _plot(alt: str, table: list[list[str]]) -> list[str]:
    """Each column of the plot's table, described as line_plot describes it, must be in the alt text."""
    header, rows = table[0], table[1:]
    xs = [row[0] for row in rows]
    problems = []
    for j, column in enumerate(header[1:], start=1):
        named = re.fullmatch(r"(.*) \(([^()]*)\)", column)
        name, unit = (named[1], named[2]) if named else (column, "")
        said = describe_series(name, xs, [_number(row[j]) for row in rows], unit)
        if said not in alt:
            problems.append(f"its table says {said!r}")
    return problems


def _drawing(alt: str, table: list[list[str]]) -> list[str]:
    """The drawing's alt text must count the Nodes, the saved tensors still held and the Nodes whose saved
    tensors backward freed (``<name>: freed``) that its table lists."""
    rows = table[1:]
    entries = [row[2].split("; ") for row in rows if row[2] != "-"]
    nodes, saved = len(rows), sum(1 for held in entries for e in held if not e.endswith(": freed"))
    freed = sum(1 for held in entries if any(e.endswith(": freed") for e in held))
    counted = [f"{nodes} backward Node{'s' if nodes != 1 else ''}", f"{saved} saved tensor{'s' if saved != 1 else ''}"]
    counted += [f"backward has freed what {freed} Node{'s' if freed != 1 else ''} saved"] if freed else []
    return [f"its table lists {c}" for c in counted if c not in alt]


def _grid(alt: str, table: list[list[str]]) -> list[str]:
    """A grid's alt text must name its largest entry in size, where the table has it."""
    columns = table[0][1:]
    entries = [(abs(_number(v)), row[0], columns[j], v) for row in table[1:] for j, v in enumerate(row[1:])]
    size, row, column, _ = max(entries, key=lambda e: e[0])
    shown = [e for e in entries if e[0] == size]
    return (
        []
        if any(f"at {r}, {c}." in alt for _, r, c, _ in shown)
        else [f"its table's largest entry is at {row}, {column}"]
    )


def _bars(alt: str, table: list[list[str]]) -> list[str]:
    """A timeline's alt text must name every bar of its table, from and to where it spans."""
    return [f"its table has {bar} from {a} to {b}" for _, bar, a, b in table[1:] if f"{bar} from {a} to {b}" not in alt]


AGREES = {
    "Text version: the numbers plotted": _plot,
    "Text version: the Nodes and what they saved": _drawing,
    "Text version: the numbers in the grid": _grid,
    "Text version: the bars": _bars,
}


def generic(alt: str) -> bool:
    """Alt text that says nothing of this picture: a word such as "plot", a few words, a repr."""
    words = re.findall(r"\w+", alt.lower())
    return alt.lstrip().startswith("<") or len(words) < 6 or set(words) <= GENERIC


def figure_problems(out) -> list[str]:
    """What is wrong with the pictures of one output: none without a figure, alt text missing or
    generic, a text version missing or disagreeing with the alt text."""
    data = out.get("data", {})
    page = data.get("text/html", "")
    page = "".join(page) if isinstance(page, list) else page
    pictures = [k for k in data if k.startswith("image/")] + (["<img>"] if "<img" in page else [])
    figures = FIGURE.findall(page)
    if pictures and not figures:
        return [f"a picture ({', '.join(pictures)}) with no alt text nor text version: show it as a Figure"]
    problems = []
    for figure in figures:
        alt = html.unescape(ALT.search(figure)[1]) if ALT.search(figure) else ""
        summary = SUMMARY.search(figure)
        if not alt.strip() or generic(alt):
            problems.append(f"alt text missing or generic: {alt!r}")
        elif summary is None or html.unescape(summary[1]) not in AGREES:
            problems.append(f"no text version this test can compare: {summary[1] if summary else None!r}")
        else:
            problems += [
                f"{p}, its alt text does not: {alt!r}" for p in AGREES[html.unescape(summary[1])](alt, _table(figure))
            ]
    return problems


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: str(p.relative_to(REPO)))
def test_every_picture_says_what_it_shows_as_its_text_version_does(path):
    problems = []
    for i, cell in enumerate(nbformat.read(path, as_version=4).cells):
        for out in cell.get("outputs", []):
            problems += [f"cell {i}: {p}" for p in figure_problems(out)]
    assert not problems, "\n".join(problems)


def _figure(alt: str, summary: str, rows: list[list[str]]) -> dict:
    table = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in rows)
    figure = (
        f'<figure class="autograd-drawing"><img src="data:image/svg+xml;base64," alt="{html.escape(alt)}">'
        f"<figcaption><details><summary>{summary}</summary><table>{table}</table></details></figcaption></figure>"
    )
    return {"output_type": "display_data", "data": {"text/html": figure, "image/svg+xml": "<svg/>"}}


LESSON_8 = [["segments", "16 x Linear-Tanh"], ["1", "17"], ["2", "10"], ["3", "9"], ["4", "8"], ["5", "17"]]


@pytest.mark.parametrize(
    ("output", "found"),
    [
        (
            {"output_type": "display_data", "data": {"image/png": "iVBOR", "text/plain": "<Figure size 640x480>"}},
            "no alt",
        ),
        (_figure("plot", "Text version: the numbers plotted", LESSON_8), "generic"),
        (
            _figure(
                "Peak against the number of segments: peak saved activations against segments. Which count is lowest? "
                "16 x Linear-Tanh starts at 17, ends at 17 at 5.",
                "Text version: the numbers plotted",
                LESSON_8,
            ),
            "is lowest, 8, at 4",
        ),
        (
            _figure(
                "Autograd graph, 2 backward Nodes (MulBackward0; AccumulateGrad for w) and 1 saved tensor.",
                "Text version: the Nodes and what they saved",
                [
                    ["node", "sends grad to", "saved for backward"],
                    ["MulBackward0", "AccumulateGrad", "-"],
                    ["A", "-", "-"],
                ],
            ),
            "0 saved tensors",
        ),
    ],
    ids=[
        "a bare png",
        "generic alt",
        "a plot's alt without its minimum",
        "a drawing's alt with a saved tensor too many",
    ],
)
def test_the_check_rejects_what_it_must(output, found):
    """Does the check reject a picture without alt text, a generic alt text, lesson 8's old alt text
    (which left out the minimum the plot is for) and a drawing's alt text that counts a saved tensor
    its table does not list?"""
    problems = figure_problems(output)
    assert problems and found in problems[0], problems
