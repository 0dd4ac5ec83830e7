"""Do the compiled-graph instruments report Dynamo's graph breaks and the tensors AOTAutograd's
forward graph saves for its backward graph, in the bytes SavedTensorMeter measures?"""

import logging

import pytest
import torch
from functorch.compile import make_boxed_func
from torch._dynamo.backends.common import aot_autograd

from autograder.compiled_graphs import PARTITIONS, capture_graphs, graph_breaks, saved_bytes, saved_tensors
from autograder.memory import measure_saved

torch._logging.set_logs(dynamo=logging.ERROR)  # graph-break warnings name files; not needed here


def chain(x):
    return x.sin().cos().tanh()


def linear(x, w, b):
    return torch.tanh(x @ w + b).sum()


def with_print(x):
    y = x.sin()
    print("inside")
    return y.cos()


def test_graph_breaks_counts_a_print():
    """Does a print between two ops split the function into two graphs with one break, whose reason
    names the builtin and holds no file path?"""
    found = graph_breaks(with_print, torch.randn(3))
    assert (found.graphs, found.breaks) == (2, 1)
    assert "builtin" in found.reasons[0] and "/" not in found.reasons[0]


def test_graph_breaks_of_a_skipped_function():
    """Is a function Dynamo gives up on entirely (retain_grad inside) reported as no graph and no
    break, not explain's -1?"""

    def retains(x):
        y = x.sin()
        y.retain_grad()
        return y.cos()

    found = graph_breaks(retains, torch.randn(3, requires_grad=True))
    assert (found.graphs, found.breaks) == (0, 0)


def test_graph_breaks_of_a_function_without_break():
    """Is a pure tensor function one graph without breaks?"""
    found = graph_breaks(chain, torch.randn(3))
    assert (found.graphs, found.breaks, found.reasons) == (1, 0, [])


@pytest.mark.parametrize("partition", ["default", "min_cut"])
@pytest.mark.parametrize(
    ("fn", "make_args"),
    [
        (chain, lambda: (torch.randn(100, requires_grad=True),)),
        (
            linear,
            lambda: (torch.randn(16, 8), torch.randn(8, 4, requires_grad=True), torch.randn(4, requires_grad=True)),
        ),
    ],
)
def test_saved_bytes_equal_what_the_meter_measures(fn, make_args, partition):
    """Are the bytes read from the graphs those SavedTensorMeter measures around the compiled call
    (each storage once: a saved view of an input counts as the input)?"""
    torch.manual_seed(0)
    args = make_args()
    captured = capture_graphs(fn, *args, partition=partition)
    backend = aot_autograd(fw_compiler=lambda gm, _: make_boxed_func(gm.forward), partition_fn=PARTITIONS[partition])
    torch._dynamo.reset()
    compiled = torch.compile(fn, backend=backend)
    _, meter = measure_saved(compiled, *args)
    torch._dynamo.reset()
    assert saved_bytes(captured) == meter.alive_bytes > 0


def test_min_cut_recomputes_a_pointwise_op():
    """On sin -> cos -> tanh, does the default partitioner save what eager saves (x, sin(x), the
    tanh output) and min-cut drop sin(x), which the backward graph then recomputes?"""
    x = torch.randn(100, requires_grad=True)
    default, min_cut = capture_graphs(chain, x, partition="default"), capture_graphs(chain, x, partition="min_cut")
    _, eager = measure_saved(chain, x)
    assert saved_bytes(default) == eager.alive_bytes == 3 * 400
    assert saved_bytes(min_cut) == 2 * 400
    assert "sin" in [base for _, base, *_ in saved_tensors(default)]
    assert "sin" not in [base for _, base, *_ in saved_tensors(min_cut)]
    assert "aten.sin" in min_cut.backward.code
    assert x.grad is None  # capture_graphs ran backward with autograd.grad


def test_saved_tensors_names_the_base_of_a_view():
    """Is a saved detach() of the tanh output reported with the tanh node as its base?"""
    captured = capture_graphs(chain, torch.randn(5, requires_grad=True), partition="default")
    rows = saved_tensors(captured)
    assert any(name.startswith("detach") and base == "tanh" for name, base, *_ in rows)
    assert all(shape == (5,) and dtype == torch.float32 and nbytes == 20 for _, _, shape, dtype, nbytes in rows)


def test_unknown_partition_raises():
    """Is an unknown partitioner name refused with KeyError?"""
    with pytest.raises(KeyError):
        capture_graphs(chain, torch.randn(2, requires_grad=True), partition="fastest")
