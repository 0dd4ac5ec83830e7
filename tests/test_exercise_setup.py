"""Does the start page's way of checking an answer (run the setup cell, then an answer cell, then its
check cell) work in an exercise whatever else was run: does every check cell and answer cell use only
names that the setup cell, an answer cell or the cell itself defines? And is the code a question shows
in its text the code the setup cell runs?"""

import ast
import symtable

import nbformat
import pytest

from autograder.lessons import COURSE_ROOT

# The exercises whose questions need no other code cell (the others still define a question's code in a
# locked cell between its text and its answer cell; add them here once their setup cell defines it).
SELF_CONTAINED = ["ex13_compile"]
# The exercises whose question texts show, as ```python blocks, code that the setup cell defines.
SHOWN_IN_TEXT = ["ex13_compile"]


def code_cells(exercise: str) -> dict[str, str]:
    """{grade_id: source} of the solution's code cells, IPython's % lines left out."""
    nb = nbformat.read(COURSE_ROOT / "solutions" / exercise / f"{exercise}.ipynb", as_version=4)
    return {
        cell.metadata["nbgrader"]["grade_id"]: "".join(
            line for line in cell.source.splitlines(True) if not line.lstrip().startswith("%")
        )
        for cell in nb.cells
        if cell.cell_type == "code"
    }


def defined(source: str) -> set[str]:
    """The names a cell binds at the top level (assigned, imported, def or class)."""
    table = symtable.symtable(source, "<cell>", "exec")
    return {s.get_name() for s in table.get_symbols() if s.is_assigned() or s.is_imported() or s.is_namespace()}


def needed(source: str) -> set[str]:
    """The global names a cell reads (at the top level or in its functions) without binding them itself."""
    top = symtable.symtable(source, "<cell>", "exec")
    own, names = defined(source), set()

    def visit(table):
        for symbol in table.get_symbols():
            at_top = table is top and symbol.is_referenced()
            if (at_top or (symbol.is_global() and symbol.is_referenced())) and symbol.get_name() not in own:
                names.add(symbol.get_name())
        for child in table.get_children():
            visit(child)

    visit(top)
    return names


@pytest.mark.parametrize("exercise", SELF_CONTAINED)
def test_check_and_answer_cells_need_only_the_setup_cell_and_the_answers(exercise):
    """Does each check cell and answer cell read only names that the setup cell, an answer cell or the
    cell itself defines, so that "setup, answer, check" works for any question in any order?"""
    cells = code_cells(exercise)
    allowed = defined(cells["setup"]).union(*(defined(src) for gid, src in cells.items() if gid.endswith("_answer")))
    elsewhere = set().union(*(defined(src) for gid, src in cells.items() if gid != "setup"))
    for gid, source in cells.items():
        if gid.endswith(("_check", "_answer")):
            missing = sorted(name for name in needed(source) if name in elsewhere - allowed - defined(source))
            assert not missing, f"{gid} needs {missing}, defined in another cell than setup or an answer"


def shown_definitions(exercise: str) -> dict[str, str]:
    """{name: ast dump} of the top-level functions and assignments in the ```python blocks of the
    exercise's markdown cells."""
    nb = nbformat.read(COURSE_ROOT / "solutions" / exercise / f"{exercise}.ipynb", as_version=4)
    shown = {}
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for block in cell.source.split("```python\n")[1:]:
                shown.update(top_level(block.split("```")[0]))
    return shown


def top_level(source: str) -> dict[str, str]:
    """{name: ast dump} of the functions defined and the single names assigned at the top level."""
    found = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef):
            found[node.name] = ast.dump(node)
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            found[node.targets[0].id] = ast.dump(node)
    return found


@pytest.mark.parametrize("exercise", SHOWN_IN_TEXT)
def test_the_code_a_question_shows_is_the_code_the_setup_cell_runs(exercise):
    """Is every function (or dict) that a question's text shows and the setup cell defines the same code
    in both places, and does the setup cell define everything the texts show?"""
    shown = shown_definitions(exercise)
    run = top_level(code_cells(exercise)["setup"])
    assert shown, "the questions show no code"
    assert {name for name in shown if shown[name] != run.get(name)} == set()
