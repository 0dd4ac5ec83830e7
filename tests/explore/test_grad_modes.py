"""Does the explorer of chapter 6 show what the lesson says it shows?"""

import ipywidgets as widgets

from autograder.explore.grad_modes import grad_mode_explorer, grad_mode_facts, grad_mode_table
from tests.explore.test_shell import shown


def test_grad_mode_facts():
    """Do no_grad and inference_mode record nothing and save 0 bytes, does only an inference
    output refuse to be saved later, and does eval() still record a graph?"""
    grad = grad_mode_facts("grad mode")
    assert grad["requires_grad"] and grad["grad_fn"] == "AddmmBackward0" and grad["saved_bytes"] > 0
    assert not grad["repeatable"] and grad["backward"] == grad["reuse"] == "ok"
    for mode in ("no_grad", "inference_mode"):
        f = grad_mode_facts(mode)
        assert f["saved_bytes"] == 0 and f["grad_fn"] is None and f["backward"] == "not_built"
    assert grad_mode_facts("no_grad")["reuse"] == "ok"
    assert grad_mode_facts("inference_mode")["reuse"] == "inference_tensor"
    evaluated = grad_mode_facts("grad mode", train=False)
    assert evaluated["grad_fn"] == "AddmmBackward0" and evaluated["repeatable"]
    assert 0 < evaluated["saved_bytes"] < grad["saved_bytes"]  # no dropout mask to save
    detached = grad_mode_facts("grad mode", detach=True)
    assert detached["saved_bytes"] == grad["saved_bytes"] and detached["backward"] == "not_built"
    assert "inference_tensor" in grad_mode_table()


def test_grad_mode_widget_builds():
    """Does the grad-mode explorer build without a running frontend and show the table of its
    default checkboxes?"""
    assert isinstance(grad_mode_explorer(), widgets.Widget)
    assert shown(grad_mode_explorer) == grad_mode_table() + "\n"
