"""Does the explorer of chapter 9 show what the lesson says about the four ways to write a ReLU?"""

import ipywidgets as widgets

from autograder.explore.functions import RELU_WAYS, relu_explorer, relu_facts, relu_table
from tests.explore.test_shell import shown


def test_saved_bytes_of_each_way():
    """Does saving the input or the output cost 4 bytes per element, a bool mask 1, and a ctx
    attribute nothing the meter can see?"""
    n = 512
    bytes_of = {way: relu_facts(way, n=n)["saved_bytes"] for way in RELU_WAYS}
    assert bytes_of == {"save input": 4 * n, "save mask": n, "save output": 4 * n, "ctx attribute": 0}


def test_saving_the_output_is_free_when_the_next_node_saves_it_too():
    """Followed by `h @ w` (which saves h), does saving the output add nothing, while the mask adds
    n bytes and the input 4n?"""
    n = 256
    bytes_of = {way: relu_facts(way, "@ w", n)["saved_bytes"] for way in RELU_WAYS}
    assert bytes_of == {"save input": 8 * n, "save mask": 5 * n, "save output": 4 * n, "ctx attribute": 4 * n}


def test_ctx_attribute_outlives_backward_and_is_not_version_checked():
    """Does only the ctx attribute survive backward, and is an in-place change of the input caught
    only when the input went through save_for_backward?"""
    facts = {way: relu_facts(way, n=64) for way in RELU_WAYS}
    assert all(f["grad_right"] for f in facts.values())
    assert {w: f["held_after_backward"] for w, f in facts.items()} == {
        "save input": [],
        "save mask": [],
        "save output": [],
        "ctx attribute": ["x"],
    }
    assert {w: f["input_changed"] for w, f in facts.items()} == {
        "save input": "raises",
        "save mask": "right",
        "save output": "right",
        "ctx attribute": "silently wrong",
    }


def test_relu_widget_builds():
    """Does the explorer build without a running frontend and show the table of its defaults?"""
    assert isinstance(relu_explorer(), widgets.Widget)
    assert shown(relu_explorer) == relu_table("nothing", 1024) + "\n"


def test_table_tells_the_relus_own_bytes_from_the_graphs():
    """Followed by `h @ w`, does the ReLU's own Node save the same bytes as alone, while the graph's
    figure grows by the product's saved `h` (each storage once), and does the table say which is which?"""
    n = 256
    alone = {way: relu_facts(way, n=n) for way in RELU_WAYS}
    then_w = {way: relu_facts(way, "@ w", n) for way in RELU_WAYS}
    assert {w: f["relu_bytes"] for w, f in alone.items()} == {w: f["relu_bytes"] for w, f in then_w.items()}
    assert {w: f["relu_bytes"] for w, f in alone.items()} == {w: f["saved_bytes"] for w, f in alone.items()}
    table = relu_table("@ w", n)
    assert "ReLU saves" in table and "graph saves" in table and "each storage once" in table
    row = next(line for line in table.splitlines() if line.startswith("save mask"))
    assert row.split()[2:6] == [str(n), "B", str(5 * n), "B"]
