"""Does redaction take every hidden-test line out of what a learner sees, and nothing else?"""

import copy

import nbformat
from nbformat.v4 import new_code_cell, new_output
from nbgrader.preprocessors import ClearHiddenTests

from autograder.grading.out.redact import HIDDEN_NOTE, redact, split_hidden

from ..conftest import nbgrader_meta

HIDDEN_LINE = 'check.value(f(), expected_f(), "f()", hint="f() should be 1", show_values=False)'  # conftest


def test_released_source_is_what_nbgrader_releases(source):
    """Is a test cell without its hidden regions (note=None) exactly what nbgrader's
    ClearHiddenTests leaves, also for an indented region?"""
    cells = [
        copy.deepcopy(source.cells[3]),
        new_code_cell(
            "for x in (1, 2):\n    ### BEGIN HIDDEN TESTS\n    assert x\n    ### END HIDDEN TESTS\nprint('done')",
            metadata=nbgrader_meta("q2_check", grade=True, locked=True, points=1),
        ),
    ]
    for cell in cells:
        ours = "\n".join(split_hidden(cell.source, note=None)[0])
        cleared, _ = ClearHiddenTests().preprocess_cell(copy.deepcopy(cell), {}, 0)
        assert ours == cleared.source


def test_test_cell_keeps_a_note_and_only_the_error_message(source):
    """Does a failed test cell show a note where hidden tests ran and ``Ename: message`` instead of
    the traceback that quotes the hidden lines?"""
    nb = copy.deepcopy(source)
    nb.cells[3].outputs = [
        new_output(
            "error",
            ename="AssertionError",
            evalue="f returned None",
            traceback=["----> 1 assert f() is not None", f"      3 {HIDDEN_LINE}"],
        )
    ]
    redact(nb)
    assert HIDDEN_LINE not in nbformat.writes(nb)
    assert HIDDEN_NOTE in nb.cells[3].source
    assert nb.cells[3].outputs[0].traceback == ["AssertionError: f returned None"]


def test_output_lines_quoting_hidden_tests_are_dropped_elsewhere_kept(source):
    """Is a warning line that quotes a hidden line dropped from a cell's output, while the warning
    itself and other output lines stay?"""
    nb = copy.deepcopy(source)
    nb.cells[3].outputs = [
        new_output("stream", name="stderr", text=f"<cell>:3: UserWarning: slow\n  {HIDDEN_LINE}\nOK f\n")
    ]
    redact(nb)
    assert nb.cells[3].outputs[0].text == "<cell>:3: UserWarning: slow\nOK f\n"
