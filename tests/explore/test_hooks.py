"""Does the explorer of chapter 10 show the hooks that fire, in the order they fire?"""

import ipywidgets as widgets

from autograder.explore.hooks import HOOK_KINDS, hook_events, hook_explorer, hook_table
from tests.explore.test_shell import shown


def test_forward_hooks_fire_in_forward_and_backward_hooks_from_the_last_layer():
    """Do forward hooks fire during the forward (pre-hook first), and backward hooks from layer 2
    down to layer 0 during the backward?"""
    events = hook_events(("forward pre", "forward", "full backward"))["events"]
    backward = events.index("(backward runs)")
    assert events[1:backward] == [
        "forward  pre-hook  0",
        "forward  hook      0",
        "forward  pre-hook  2",
        "forward  hook      2",
    ]
    layers = [e.split()[2] for e in events[backward + 1 :]]
    assert layers == ["2", "0"]


def test_full_backward_hook_and_inplace_relu_raise_in_the_forward():
    """Does a full backward hook before ReLU(inplace=True) make the forward raise PyTorch's
    'BackwardHookFunction is a view' error, and does a tensor hook instead work?"""
    facts = hook_events(("full backward",), inplace=True)
    assert "BackwardHookFunction is a view and is being modified inplace" in facts["error"]
    assert "(backward runs)" not in facts["events"]
    ok = hook_events(("tensor",), inplace=True)
    assert ok["error"] is None and sum("tensor" in e for e in ok["events"]) == 2


def test_first_layer_full_backward_hook_warns_and_sees_no_grad_input():
    """Does the full backward hook of the first layer (whose input needs no grad) get grad_input
    None, with PyTorch's warning?"""
    facts = hook_events(("full backward",))
    assert any("backward full      0" in e and "|grad in| = None" in e for e in facts["events"])
    assert any("no inputs require gradients" in w for w in facts["warnings"])


def test_tensor_hook_and_full_backward_hook_see_the_same_grad_output():
    """Is the gradient a tensor hook on a layer's output sees the grad_output of that layer's
    full backward hook?"""
    events = hook_events(("tensor", "full backward"))["events"]
    for layer in ("0", "2"):
        norms = {e.split("|grad out| = ")[1].split()[0] for e in events if e.split()[2:3] == [layer]}
        assert len(norms) == 1


def test_table_and_widget_show_the_same_text():
    """Does the widget show hook_table of its default choice (tensor and full backward hooks)?"""
    assert set(HOOK_KINDS) >= {"tensor", "full backward"}
    assert isinstance(hook_explorer(), widgets.Widget)
    assert shown(hook_explorer) == hook_table(("tensor", "full backward")) + "\n"
    assert "RuntimeError" in hook_table(("full backward",), inplace=True)
