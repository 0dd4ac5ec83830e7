"""Does trace() turn a graph into stable, correct records?"""

import pytest
import torch

from autograder.graph import SAVED_PREFIX, is_python_scalar, saved_attributes, trace
from autograder.memory import measure_saved


def build():
    torch.manual_seed(0)
    w = torch.randn(3, requires_grad=True)
    x = torch.randn(3)
    loss = (w.sigmoid() * x).sum()
    return w, x, loss


def test_nodes_are_named_in_visit_order_by_kind():
    """Are Nodes named by class, breadth first from the output, with AccumulateGrad for w?"""
    w, _, loss = build()
    graph = trace(loss, names={"w": w})
    assert [n.name for n in graph.nodes] == ["SumBackward0", "MulBackward0", "SigmoidBackward0", "AccumulateGrad"]
    assert graph["AccumulateGrad"].leaf == "w"
    assert graph.roots == ("SumBackward0",)
    assert graph.edges[0] == ("SumBackward0", "MulBackward0")


def test_repeated_kinds_get_numbered_names():
    """Do two Nodes of one kind get the names kind and kind.2?"""
    x = torch.ones(2, requires_grad=True)
    graph = trace(x * 3 * 4)
    assert [n.name for n in graph.nodes] == ["MulBackward0", "MulBackward0.2", "AccumulateGrad"]
    assert graph.counts() == {"MulBackward0": 2, "AccumulateGrad": 1}


def test_a_node_reached_twice_is_recorded_once():
    """Is a Node used by two consumers (y in y * y) one record with two edges to it?"""
    x = torch.ones(2, requires_grad=True)
    y = x.exp()
    graph = trace(y * y)
    assert graph.counts() == {"MulBackward0": 1, "ExpBackward0": 1, "AccumulateGrad": 1}
    assert graph["MulBackward0"].next == ("ExpBackward0", "ExpBackward0")


def test_saved_tensors_are_described_and_freed_after_backward():
    """Does the record show the sigmoid's saved output (shape, dtype, bytes), and 'freed' after backward?"""
    _, _, loss = build()
    saved = trace(loss)["SigmoidBackward0"].saved
    assert [(s.attr, s.shape, s.dtype, s.nbytes, s.freed) for s in saved] == [("result", (3,), "float32", 12, False)]
    loss.backward()
    assert all(s.freed for s in trace(loss)["SigmoidBackward0"].saved)


def test_records_are_identical_from_run_to_run():
    """Do two traces of the same code give equal records and tables (no id()-based names)?"""
    a, b = trace(build()[2]), trace(build()[2])
    assert a == b and a.table() == b.table()
    assert "0x" not in a.table()


def test_leaf_without_grad_fn_gives_an_empty_graph():
    """Does a leaf (no grad_fn) give a graph with no Nodes and no roots?"""
    graph = trace(torch.ones(2, requires_grad=True))
    assert len(graph) == 0 and graph.roots == ()


def test_trace_rejects_non_tensors():
    """Is a clear TypeError raised for something that is not a tensor?"""
    with pytest.raises(TypeError, match="takes tensors"):
        trace([torch.ones(1), 3.0])


def test_graph_depends_on_the_data():
    """Does a data-dependent loop give a different number of Nodes for different inputs?"""

    def f(x):
        y = x
        while y.norm() < 10:
            y = y * 2
        return y

    small, big = torch.full((2,), 0.1, requires_grad=True), torch.full((2,), 4.0, requires_grad=True)
    assert trace(f(small)).counts()["MulBackward0"] > trace(f(big)).counts()["MulBackward0"]


def test_python_number_operand_is_a_wrapped_number_the_hooks_never_see():
    """Is the 2 of x * 2 shown as a Python scalar with its real bytes (a 0-dim int64 CPU tensor),
    marked as unseen by saved_tensors_hooks, which indeed receive nothing?"""
    x = torch.ones(2, requires_grad=True)
    y, meter = measure_saved(lambda: x * 2)
    (saved,) = trace(y)["MulBackward0"].saved
    other = y.grad_fn._saved_other
    assert is_python_scalar(other) and saved.scalar and meter.packed_tensors == 0
    assert saved.nbytes == other.untyped_storage().nbytes() == other.element_size() == 8
    assert str(saved) == "other: Python scalar (8 B, not seen by saved_tensors_hooks)"


def test_a_saved_zero_dim_tensor_is_not_a_python_scalar():
    """Is a 0-dim float32 tensor the user created (x * torch.tensor(2.0)) a saved tensor, not a
    Python scalar, and are the saved attributes listed without their prefix?"""
    x = torch.ones(2, requires_grad=True)
    y = x * torch.tensor(2.0, requires_grad=True)
    assert saved_attributes(y.grad_fn) == ["other", "self"]
    assert not is_python_scalar(getattr(y.grad_fn, SAVED_PREFIX + "other"))
    assert [str(s) for s in trace(y)["MulBackward0"].saved] == [
        "other: float32[scalar] 4 B v0",
        "self: float32[2] 8 B v0",
    ]


def test_saved_tensor_modified_in_place_is_not_reported_as_freed():
    """Is a saved output changed in place (y = x.sigmoid(); y += 1) recorded as modified, with its
    shape, bytes and both versions, rather than as freed?"""
    x = torch.ones(2, 3, requires_grad=True)
    y = x.sigmoid()
    y += 1
    y.mul_(2)
    (saved,) = trace(y)["SigmoidBackward0"].saved
    assert (saved.modified, saved.freed, saved.shape, saved.dtype, saved.nbytes) == (True, False, (2, 3), "float32", 24)
    assert (saved.saved_version, saved.version) == (0, 2)
    assert "MODIFIED in place: saved at v0, now v2" in str(saved)


class SaveOutputAndInput(torch.autograd.Function):
    """exp(x) * 2, saving its output, a None and its input."""

    @staticmethod
    def forward(x):
        return x.exp() * 2

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output, None, inputs[0])

    @staticmethod
    def backward(ctx, grad_y):
        y, _, _ = ctx.saved_tensors
        return grad_y * y


def packed(fn):
    """Run fn() under a saved_tensors_hooks pack hook: its result and [(shape, dtype, bytes)] of what was packed."""
    seen = []

    def pack(t):
        seen.append((tuple(t.shape), str(t.dtype).replace("torch.", ""), t.numel() * t.element_size()))
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        return fn(), seen


def test_what_a_custom_function_saves_is_recorded_as_the_hooks_see_it():
    """Does the Node of a custom Function show what ctx.save_for_backward saved (None left out, indices kept),
    as a saved_tensors_hooks pack hook sees it, and not as a Python scalar?"""
    x = torch.ones(2, 3, dtype=torch.float64, requires_grad=True)
    y, seen = packed(lambda: SaveOutputAndInput.apply(x))
    saved = trace(y)["SaveOutputAndInputBackward"].saved
    assert [(s.shape, s.dtype, s.nbytes) for s in saved] == seen
    assert [s.attr for s in saved] == ["saved_tensors[0]", "saved_tensors[2]"]
    assert not any(s.scalar or s.freed for s in saved)


def test_a_saved_zero_dim_double_of_a_custom_function_is_not_a_python_scalar():
    """Is a 0-dim float64 CPU tensor saved by a custom Function (which the hooks do see) counted as a tensor?"""
    x = torch.tensor(2.0, dtype=torch.float64, requires_grad=True)
    y, seen = packed(lambda: SaveOutputAndInput.apply(x))
    saved = trace(y)["SaveOutputAndInputBackward"].saved
    assert sum(s.nbytes for s in saved) == sum(b for *_, b in seen) == 16
    assert not any(s.scalar for s in saved)


def test_a_custom_functions_saved_tensors_are_freed_or_modified_like_any_nodes():
    """After backward is the Function's Node's record 'freed'; after an in-place change of its saved output,
    'modified' with both versions?"""
    x = torch.ones(4, requires_grad=True)
    y = SaveOutputAndInput.apply(x)
    y.sum().backward()
    assert [(s.attr, s.freed) for s in trace(y)["SaveOutputAndInputBackward"].saved] == [("saved_tensors", True)]
    y = SaveOutputAndInput.apply(x)
    node = trace(y)
    y.add_(1)
    (saved,) = trace(y)["SaveOutputAndInputBackward"].saved
    assert (saved.modified, saved.shape, saved.nbytes, saved.saved_version, saved.version) == (True, (4,), 16, 0, 1)
    assert node["SaveOutputAndInputBackward"].saved_bytes == 32  # before the change: output and input


def test_the_node_of_a_compiled_block_shows_what_its_forward_saved():
    """Does CompiledFunctionBackward's record hold what the compiled forward saved for backward, as a pack hook
    around the compiled call sees it (before the fix it showed nothing)?"""
    torch._dynamo.reset()
    try:
        x, w = torch.randn(8, 4), torch.randn(4, 3, requires_grad=True)
        block = torch.compile(lambda x, w: torch.tanh(x @ w).sin().sum(), backend="aot_eager")
        loss, seen = packed(lambda: block(x, w))
        saved = trace(loss, names={"w": w})["CompiledFunctionBackward"].saved
        assert seen and sorted((s.shape, s.dtype, s.nbytes) for s in saved) == sorted(seen)
    finally:
        torch._dynamo.reset()


def test_a_drawing_counts_a_custom_functions_saved_tensors():
    """Does the drawing's text alternative count the tensor a Function saved (lesson 9's ProbeBackward)?"""
    from autograder.draw import describe

    x = torch.ones(3, requires_grad=True)
    graph = trace(SaveOutputAndInput.apply(x).sum())
    assert "2 saved tensors" in describe(graph)
