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


def _section_of_each_cell(nb) -> list[bool]:
    """For each cell of ``nb``: is it inside a "Going deeper" section (from its heading to the next
    heading of the same or a higher level)?"""
    inside, level, flags = False, 0, []
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            found = re.match(r"\s*(#{1,6})\s+(.*)", cell.source)
            if found:
                depth = len(found.group(1))
                if GOING_DEEPER.search(cell.source):
                    inside, level = True, depth
                elif inside and depth <= level:
                    inside = False
        flags.append(inside)
    return flags


def _python(source: str) -> str:
    """A code cell's source as Python: IPython's magics and shell lines left out."""
    return "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines())


def _bound_and_used(source: str) -> tuple[set[str], set[str]]:
    """The names a cell binds (assignments, imports, defs, arguments, loop and with targets, also
    inside its functions: a local of the same name hides a miss, never invents one) and the names
    it reads."""
    import ast
    import builtins

    try:
        tree = ast.parse(_python(source))
    except SyntaxError:  # a cell written to fail with a SyntaxError
        return set(), set()
    bound, used = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (bound if isinstance(node.ctx, ast.Store | ast.Del) else used).add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(node.name)
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return bound, used - set(dir(builtins))


def names_only_from_depth(nb) -> list[str]:
    """The names a core-path code cell reads that only a folded "Going deeper" cell above it binds:
    a learner who skips the folded sections (Shift-Enter passes over collapsed cells) would get a
    NameError there."""
    problems, core_bound, depth_bound = [], set(), set()
    for index, (cell, deep) in enumerate(zip(nb.cells, _section_of_each_cell(nb), strict=True)):
        if cell.cell_type != "code":
            continue
        bound, used = _bound_and_used(cell.source)
        if deep:
            depth_bound |= bound
            continue
        missing = sorted((used - bound - core_bound) & depth_bound)
        if missing:
            problems.append(f"cell {index}: {', '.join(missing)} bound only in a Going deeper section")
        core_bound |= bound
    return problems


def test_the_check_finds_a_core_cell_that_needs_a_folded_one():
    """Does the check flag a core cell that reads a name only a folded section binds, and accept
    one that binds the name itself?"""
    md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    heading = md("## Going deeper: x", metadata={"jp-MarkdownHeadingCollapsed": True})
    needs = nbformat.v4.new_notebook(cells=[heading, code("cell = 1"), md("## 2. Core"), code("print(cell)")])
    own = nbformat.v4.new_notebook(cells=[heading, code("cell = 1"), md("## 2. Core"), code("cell = 2\nprint(cell)")])
    assert names_only_from_depth(needs) == ["cell 3: cell bound only in a Going deeper section"]
    assert names_only_from_depth(own) == []


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda p: p.stem)
def test_the_core_path_runs_without_the_folded_sections(lesson):
    assert names_only_from_depth(nbformat.read(lesson, as_version=4)) == []


def _compiles_with_inductor(source: str) -> bool:
    """Does a code cell compile with Inductor (backend "inductor" named, or torch.compile without a backend)?"""
    calls = re.findall(r"torch\.compile\(([^()]*(?:\([^()]*\)[^()]*)*)\)", source)
    return '"inductor"' in source or any("backend" not in args for args in calls)


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda p: p.stem)
def test_a_cell_that_compiles_with_inductor_runs_only_when_asked(lesson):
    """Inductor's code generation takes about a minute: under Run All such a cell must run only when the
    learner sets its flag, or COURSE_SLOW_CELLS=1 (conftest.py sets it, so nbval still runs the cell)."""
    for index, cell in enumerate(nbformat.read(lesson, as_version=4).cells):
        if cell.cell_type == "code" and _compiles_with_inductor(cell.source):
            assert 'os.environ.get("COURSE_SLOW_CELLS") == "1"' in cell.source, f"cell {index} compiles unasked"


def test_the_inductor_check_tells_a_backend_from_none():
    assert _compiles_with_inductor('torch.compile(f, backend="inductor")')
    assert _compiles_with_inductor("torch.compile(model)")
    assert not _compiles_with_inductor('torch.compile(f, backend="aot_eager")(x)')
    assert not _compiles_with_inductor('torch.compile(lambda x: x.sin(), backend="eager", fullgraph=True)')
