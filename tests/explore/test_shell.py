"""Does the widget shell redraw its output on every change, and say to run the cell before it runs?"""

import contextlib
import io

import ipywidgets as widgets

from autograder.explore.shell import explorer

CLEAR = "\x1b[2K\r"  # what clearing an output area prints outside a kernel


def shown(action) -> str:
    """What an explorer shows after ``action()`` (which builds it or changes a control): outside a
    kernel its output area passes prints through to stdout, and clearing it prints ``CLEAR``."""
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        action()
    return printed.getvalue().rsplit(CLEAR, 1)[-1]


def test_output_is_drawn_at_once_and_redrawn_on_change():
    """Is the output drawn for the initial values, then cleared and redrawn when a control
    changes, with the string ``show`` returns printed?"""
    slider = widgets.IntSlider(value=1, min=1, max=5)
    assert shown(lambda: explorer("demo", {"n": slider}, lambda n: f"n is {n}")) == "n is 1\n"
    assert shown(lambda: setattr(slider, "value", 3)) == "n is 3\n"


def test_one_control_stands_alone_several_share_a_row():
    """Is a single control placed above the output as it is, and several in one HBox?"""
    slider = widgets.IntSlider()
    assert explorer("one", {"n": slider}, lambda n: None).children[0] is slider
    row = explorer("two", {"a": widgets.Checkbox(), "b": widgets.Checkbox()}, lambda a, b: None).children[0]
    assert isinstance(row, widgets.HBox) and len(row.children) == 2


def test_text_form_says_to_run_the_cell():
    """Before its cell runs in a live kernel, a notebook shows a widget's plain text: does an
    explorer's say what it is and to run the cell (not VBox(children=...)), within the 110
    characters ipywidgets keeps?"""
    box = explorer("demo", {"n": widgets.IntSlider()}, lambda n: None)
    bundle = box._repr_mimebundle_()
    assert bundle["text/plain"] == "Interactive explorer (demo): run this cell to use it."
    assert "application/vnd.jupyter.widget-view+json" in bundle
