"""Does the explorer of chapter 14 show the order in which the engine runs Nodes and hooks, and
on which thread?"""

import threading

import ipywidgets as widgets
import torch

from autograder.explore.engine import GRAPHS, all_nodes, engine_events, engine_explorer, engine_table
from tests.explore.test_shell import shown


def test_every_node_is_found_once():
    """Does all_nodes reach every Node of a graph once, the root first, AccumulateGrad included?"""
    a = torch.ones(2, requires_grad=True)
    y = a * 2
    loss = (y * y.sin()).sum()
    names = [n.name() for n in all_nodes(loss.grad_fn)]
    assert names[0] == "SumBackward0"
    assert sorted(names) == sorted(
        ["SumBackward0", "MulBackward0", "MulBackward0", "SinBackward0", "torch::autograd::AccumulateGrad"]
    )


def test_a_node_runs_after_all_its_consumers():
    """Does the Node that made y (MulBackward0) run only after both Nodes that use y (exp, cos), and
    does every graph start at the loss's Node and end at a leaf's AccumulateGrad?"""
    events = engine_events("branch", False, False)["events"]
    assert events.index("Node MulBackward0") > max(events.index("Node ExpBackward0"), events.index("Node CosBackward0"))
    for graph in GRAPHS:
        events = engine_events(graph, False, False)["events"]
        assert events[0] == "Node SumBackward0" and events[-1].startswith("Node AccumulateGrad")


def test_hooks_run_where_the_engine_reaches_them():
    """Does the tensor hook on y run just before y's grad_fn, and a post-accumulate hook right after
    its leaf's AccumulateGrad?"""
    events = engine_events("chain")["events"]
    assert events[events.index("tensor hook on y") + 1] == "Node MulBackward0"
    for leaf in ("a", "b"):
        assert events[events.index(f"Node AccumulateGrad ({leaf})") + 1] == f"post-accumulate hook on {leaf}"


def test_a_leaf_used_twice_is_accumulated_once():
    """When a is used by two Nodes, does its AccumulateGrad run once, with the summed gradient?"""
    facts = engine_events("two uses of a")
    assert facts["events"].count("Node AccumulateGrad (a)") == 1
    a = torch.tensor([1.0, 2.0])
    assert facts["grads"]["a"] == (6 * a).tolist()  # d/da of 3 a^2


def test_backward_on_the_cpu_runs_on_the_calling_thread():
    """Do all hooks run on the thread that called backward(), also when that is not the main thread?"""
    assert engine_events()["same_thread"]
    got = {}
    worker = threading.Thread(target=lambda: got.update(engine_events("branch")))
    worker.start()
    worker.join()
    assert got["same_thread"]


def test_table_and_widget_show_the_same_text():
    """Does the widget show engine_table of its default choice?"""
    assert isinstance(engine_explorer(), widgets.Widget)
    assert shown(engine_explorer) == engine_table() + "\n"
    assert "True" in engine_table("branch")
