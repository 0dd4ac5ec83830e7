"""Do the explorers of chapters 1 and 2 show what the lessons say they show?"""

import ipywidgets as widgets

from autograder.explore.graph import leaf_explorer, leaf_facts, leaf_table, run_steps, step_explorer
from tests.explore.test_shell import shown

LINES = ["y = x * 2", "z = y.exp()", "loss = z.sum()"]
SETUP = "x = torch.ones(2, requires_grad=True)"


def test_graph_grows_one_statement_at_a_time():
    """Does each extra statement add its Node to the traced graph?"""
    sizes = [len(run_steps(LINES[:k], k, ["y", "z", "loss"][k - 1], SETUP)[1]) for k in (1, 2, 3)]
    assert sizes == [2, 3, 4]


def test_unknown_variable_gives_empty_graph():
    """Is a variable not defined yet shown as an empty graph, not an error?"""
    assert len(run_steps(LINES, 1, "loss", SETUP)[1]) == 0


def test_leaf_facts_default():
    """By default, is x the only tensor with a .grad, and y, z non-leaves?"""
    rows = {r["tensor"]: r for r in leaf_facts()}
    assert rows["x"]["is_leaf"] and rows["x"]["grad"] == [8.0, 16.0, 24.0]
    assert not rows["y"]["is_leaf"] and rows["y"]["grad"] is None and rows["y"]["grad_fn"] == "MulBackward0"


def test_leaf_facts_retain_grad_and_no_grad():
    """Does retain_grad give y a .grad, and no_grad make y a leaf with no grad_fn?"""
    assert {r["tensor"]: r for r in leaf_facts(retain_grad=True)}["y"]["grad"] == [4.0, 8.0, 12.0]
    y = {r["tensor"]: r for r in leaf_facts(no_grad=True)}["y"]
    assert y["is_leaf"] and not y["requires_grad"] and y["grad_fn"] is None


def test_leaf_facts_detach():
    """Does detach() cut x off: x.grad stays None?"""
    assert {r["tensor"]: r for r in leaf_facts(detach=True)}["x"]["grad"] is None


def test_widgets_build():
    """Do both explorers build as widgets without a running frontend?"""
    assert isinstance(step_explorer(LINES, "loss", SETUP), widgets.Widget)
    assert isinstance(leaf_explorer(), widgets.Widget)


def test_explorers_are_named_and_show_the_table():
    """Does each explorer's text form carry its own name, and does the leaf explorer show
    ``leaf_table()`` for its default checkboxes?"""
    for box, name in ((step_explorer(LINES, "loss", SETUP), "step_explorer"), (leaf_explorer(), "leaf_explorer")):
        assert repr(box) == f"Interactive explorer ({name}): run this cell to use it."
    assert shown(leaf_explorer) == leaf_table() + "\n"


def test_leaf_table_has_a_row_per_tensor():
    """Does the table have a header and one row per tensor, x the only one with a gradient?"""
    lines = leaf_table().splitlines()
    assert lines[0].split() == ["tensor", "is_leaf", "requires_grad", "grad_fn", "grad"]
    assert [line.split()[0] for line in lines[1:]] == ["x", "y", "z"] and lines[1].endswith("[8.0, 16.0, 24.0]")
