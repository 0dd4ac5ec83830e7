"""A tiny nbgrader source notebook (one answer, one test worth 2 points) for grading tests."""
import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook


def nbgrader_meta(grade_id, grade=False, solution=False, locked=False, points=None):
    meta = {"grade": grade, "solution": solution, "locked": locked, "schema_version": 3,
            "task": False, "grade_id": grade_id}
    if points is not None:
        meta["points"] = points
    return {"nbgrader": meta}


@pytest.fixture
def source():
    nb = new_notebook(cells=[
        new_code_cell("import math", metadata=nbgrader_meta("setup", locked=True)),
        new_markdown_cell("Return 1.", metadata=nbgrader_meta("q1_text", locked=True)),
        new_code_cell("def f():\n    ### BEGIN SOLUTION\n    return 1\n    ### END SOLUTION",
                      metadata=nbgrader_meta("q1_answer", solution=True)),
        new_code_cell("assert f() is not None, 'f returned None'\n### BEGIN HIDDEN TESTS\n"
                      "assert f() == 1, 'f() should be 1'\n### END HIDDEN TESTS",
                      metadata=nbgrader_meta("q1_check", grade=True, locked=True, points=2)),
    ])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return nb


def submission_of(source, answer):
    """The release of `source` with the answer cell's text replaced by `answer`."""
    nb = nbformat.reads(nbformat.writes(source), as_version=4)
    nb.cells[2].source = answer
    nb.cells[3].source = "assert f() is not None, 'f returned None'"  # hidden tests stripped
    return nb
