"""Does the start page's way of checking an answer (run the set-up cell, the question's own code cells,
its answer cell, then its check cell) work in every exercise whatever else was run: does every check
cell and answer cell use only names that the set-up cell, an answer cell, its own question's code
cells or the cell itself define? And is the code a question shows in its text the code the set-up
cell runs?"""

import ast
import symtable

import nbformat
import pytest

from autograder.grading.judge.assemble import grade_id
from autograder.lessons import COURSE_ROOT

EXERCISES = sorted(p.name for p in (COURSE_ROOT / "solutions").iterdir() if p.name.startswith("ex"))
# The exercises whose question texts show, as ```python blocks, code that the set-up cell defines.
SHOWN_IN_TEXT = ["ex05_inplace", "ex13_compile"]


def release(exercise: str) -> nbformat.NotebookNode:
    """The exercise as the learner gets it (hidden tests left out, answers unanswered)."""
    return nbformat.read(COURSE_ROOT / "exercises" / exercise / f"{exercise}.ipynb", as_version=4)


def code_cells(exercise: str) -> dict[str, str]:
    """{grade_id: source} of the release's code cells, IPython's % lines left out."""
    return {
        grade_id(cell): "".join(line for line in cell.source.splitlines(True) if not line.lstrip().startswith("%"))
        for cell in release(exercise).cells
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


def question(grade_id: str) -> str:
    """ "q2" for q2_code, q2_demo, q2_answer, q2_check; "" for setup."""
    return grade_id.split("_")[0] if grade_id.startswith("q") else ""


@pytest.mark.parametrize("exercise", EXERCISES)
def test_check_and_answer_cells_need_only_setup_answers_and_their_own_questions_code(exercise):
    """Does each check cell and answer cell read only names that the set-up cell, an answer cell, a
    code cell of its own question or the cell itself defines, so that "set-up, the question's cells,
    answer, check" works for any question in any order?"""
    cells = code_cells(exercise)
    answers = set().union(*(defined(src) for gid, src in cells.items() if gid.endswith("_answer")))
    everywhere = set().union(*(defined(src) for src in cells.values()))
    for gid, source in cells.items():
        if gid.endswith(("_check", "_answer")):
            own = set().union(*(defined(src) for g, src in cells.items() if question(g) == question(gid)))
            allowed = defined(cells["setup"]) | answers | own
            missing = sorted(name for name in needed(source) if name in everywhere - allowed)
            assert not missing, f"{gid} needs {missing}, defined in another question's cells"


def shown_definitions(exercise: str) -> dict[str, str]:
    """{name: ast dump} of the top-level functions and assignments in the ```python blocks of the
    exercise's markdown cells."""
    shown = {}
    for cell in release(exercise).cells:
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
    """Is every function (or dict) that a question's text shows and the set-up cell defines the same
    code in both places? (A text may also show a snippet to read, such as predictions to make.)"""
    shown = shown_definitions(exercise)
    run = top_level(code_cells(exercise)["setup"])
    both = set(shown) & set(run)
    assert both, "no code shown in the questions is defined by the set-up cell"
    assert {name for name in both if shown[name] != run[name]} == set()
