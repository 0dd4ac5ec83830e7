"""Does the explorer of chapter 5 show what the lesson says it shows?"""

import ipywidgets as widgets

from autograder.explore.inplace import inplace_explorer, inplace_facts, inplace_table
from tests.explore.test_shell import shown


def test_inplace_facts_saved_input_vs_saved_output():
    """Is `y += 1` fine after ops that save their input or a number, and an error after ops that
    save their output (the seed's claim that `y = x * 2; y += 1` raises is false)?"""
    assert inplace_facts("y = x * 2", "y += 1")["verdict"] == "right"
    assert inplace_facts("y = x * 2", "(none)")["saved"] == ["other = 2 (a Python number)"]
    assert inplace_facts("y = x.sin()", "y += 1")["saved"] == ["self = x"]
    sig = inplace_facts("y = x.sigmoid()", "y += 1")
    assert sig["saved"] == ["result = y"] and sig["outcome"] == "modified_inplace"
    assert sig["version"] == 1 and sig["grad"] is None and sig["verdict"] == "raises"


def test_inplace_facts_detach_shares_the_counter_data_does_not():
    """Is y.detach().mul_(2) caught (shared version counter) while y.data.mul_(2) gives silently
    wrong gradients and leaves y._version at 0?"""
    assert inplace_facts("y = x.sigmoid()", "y.detach().mul_(2)")["verdict"] == "raises"
    data = inplace_facts("y = x.sigmoid()", "y.data.mul_(2)")
    assert data["version"] == 0 and data["outcome"] == "ok" and data["verdict"] == "silently wrong"
    assert data["grad"] != data["expected"]
    assert "silently wrong" in inplace_table("y = x.sigmoid()")


def test_inplace_widget_builds():
    """Does the in-place explorer build without a running frontend and show the table of its
    default op?"""
    assert isinstance(inplace_explorer(), widgets.Widget)
    assert shown(inplace_explorer) == inplace_table("y = x.sigmoid()") + "\n"
