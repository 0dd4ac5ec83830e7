"""Explorer of chapter 13: how many graphs Dynamo captures from a function, and what the compiled
forward saves for backward under each partitioner, against eager autograd."""

from __future__ import annotations

import ipywidgets as widgets
import torch

from ..compiled_graphs import capture_graphs, graph_breaks, saved_bytes, saved_tensors
from ..memory import measure_saved
from .shell import explorer
from .table import text_table

__all__ = ["BLOCKS", "compile_explorer", "compile_facts", "compile_table"]


def _print_between(x):
    y = x.sin()
    print("(the block prints)")
    return y.cos()


def _item_threshold(x):
    y = x.sin()
    if y.sum().item() > 0:
        return y.cos()
    return y.tanh()


def _tensor_if(x):
    y = x.sin()
    if y.sum() > 0:
        return y.cos()
    return y.tanh()


def _where(x):
    y = x.sin()
    return torch.where(y.sum() > 0, y.cos(), y.tanh())


# Blocks of one float32 tensor x of n elements (requires grad), by name.
BLOCKS = {
    "sin cos tanh": lambda x: x.sin().cos().tanh(),
    "x * sigmoid(1.702 x), squared, exp": lambda x: (x * torch.sigmoid(1.702 * x)).pow(2).exp(),
    "exp, then * 2": lambda x: x.exp() * 2,
    "print between ops": _print_between,
    "if on .item()": _item_threshold,
    "if on a tensor": _tensor_if,
    "torch.where instead of if": _where,
}


def compile_facts(block: str = "sin cos tanh", n: int = 1000) -> dict:
    """Graphs and breaks of ``BLOCKS[block]`` on ``x = randn(n)`` (seed 0, requires grad), and, when
    Dynamo captures it in one graph, the bytes saved for backward: by eager autograd
    (``SavedTensorMeter``) and by the compiled forward graph under each partitioner.

    Returns:
        ``{"graphs": int, "breaks": int, "reasons": [str], "saved": {"eager" | "default" |
        "min_cut": (bytes, [saved names])}}``; ``saved`` is empty when there is a graph break.
    """
    torch.manual_seed(0)
    x = torch.randn(n, requires_grad=True)
    fn = BLOCKS[block]
    breaks = graph_breaks(fn, x)
    saved = {}
    if breaks.graphs == 1 and breaks.breaks == 0:
        _, meter = measure_saved(fn, x)
        saved["eager"] = (meter.alive_bytes, [f"{meter.packed_tensors} tensors packed (SavedTensorMeter)"])
        for partition in ("default", "min_cut"):
            captured = capture_graphs(fn, x, partition=partition)
            saved[partition] = (saved_bytes(captured), [name for name, *_ in saved_tensors(captured)])
    return {"graphs": breaks.graphs, "breaks": breaks.breaks, "reasons": breaks.reasons, "saved": saved}


def compile_table(block: str = "sin cos tanh", n: int = 1000) -> str:
    """:func:`compile_facts` as text: the graph count, breaks and reasons, then one row per way
    of running the block (eager, default partition, min-cut partition) with its saved bytes."""
    facts = compile_facts(block, n)
    lines = [f"{block}: {facts['graphs']} graph(s), {facts['breaks']} graph break(s)"]
    lines += [f"  break: {reason}" for reason in facts["reasons"]]
    if facts["saved"]:
        rows = [("run as", "saved bytes", "saved for backward")]
        rows += [(name, f"{b:,}", ", ".join(names)) for name, (b, names) in facts["saved"].items()]
        lines += ["", text_table(rows, align="<><")]
    else:
        lines += ["(a graph break: each graph has its own forward and backward; see the break first)"]
    return "\n".join(lines)


def compile_explorer() -> widgets.Widget:
    """The widget: a block and the size of x; shows :func:`compile_table`."""
    controls = {
        "block": widgets.Dropdown(options=list(BLOCKS), value="sin cos tanh", description="block"),
        "n": widgets.Dropdown(options=[10, 1000, 100_000], value=1000, description="x.numel()"),
    }
    return explorer("compile_explorer", controls, compile_table)
