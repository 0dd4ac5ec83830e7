"""Explorer of chapter 11: what CPU bfloat16 autocast does to each op's output dtype, the Nodes it
adds (``ToCopyBackward0``, the casts) and the bytes the graph saves."""

from __future__ import annotations

import textwrap

import ipywidgets as widgets
import torch
import torch.nn.functional as F

from ..graph import trace
from ..memory import SavedTensorMeter
from .shell import explorer
from .table import text_table

__all__ = ["OPS", "precision_facts", "precision_table", "precision_explorer"]

# Each op takes the input x ([4, 8]) and a parameter w ([8, 8], float32, requires grad); ops that
# need no weight ignore it. Which dtype each runs in under autocast is measured, never listed.
OPS = {
    "linear": lambda x, w: F.linear(x, w),
    "matmul": lambda x, w: x @ w,
    "conv1d": lambda x, w: F.conv1d(x.t().unsqueeze(0), w.unsqueeze(-1)),  # 8 channels, length 4
    "relu": lambda x, w: torch.relu(x),
    "gelu": lambda x, w: F.gelu(x),
    "exp": lambda x, w: torch.exp(x),
    "softmax": lambda x, w: torch.softmax(x, dim=-1),
    "log_softmax": lambda x, w: torch.log_softmax(x, dim=-1),
    "layer_norm": lambda x, w: F.layer_norm(x, (8,), weight=w[0]),
    "mse_loss": lambda x, w: F.mse_loss(x, torch.zeros_like(x)),
    "cross_entropy": lambda x, w: F.cross_entropy(x, torch.zeros(4, dtype=torch.long)),
    "sum": lambda x, w: x.sum(),
}


def precision_facts(
    op: str, input_dtype: torch.dtype = torch.float32, autocast: bool = True, input_requires_grad: bool = True
) -> dict:
    """Run ``OPS[op]`` once on a seeded input ``x`` ([4, 8], ``input_dtype``, a leaf that requires
    grad when ``input_requires_grad``) and a float32 parameter ``w`` ([8, 8]), under
    ``torch.autocast("cpu", dtype=torch.bfloat16)`` when ``autocast``.

    Returns:
        ``{"output": dtype name of the result ("bfloat16"), "casts": number of ToCopyBackward0
        Nodes in the graph (int), "saved": ["<Node>.<attr>: <dtype>[shape]", ...] (the saved
        tensors, in graph order), "saved_bytes": bytes saved for backward as
        :class:`~autograder.memory.SavedTensorMeter` counts them (int, once per storage, ``w``
        itself excluded), "error": None, or the first line of the ``RuntimeError`` the op raised
        (a dtype mismatch; then output is ``"error"`` and the figures are 0)}``.
    """
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(4, 8, generator=gen).to(input_dtype).requires_grad_(input_requires_grad)
    w = torch.randn(8, 8, generator=gen).requires_grad_()
    try:
        with SavedTensorMeter(exclude=[w]) as meter, torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
            out = OPS[op](x, w)
    except RuntimeError as error:  # a dtype mismatch outside autocast: part of what to see
        return {"output": "error", "casts": 0, "saved": [], "saved_bytes": 0, "error": str(error).splitlines()[0]}
    graph = trace(out)
    saved = [
        f"{n.kind}.{s.attr}: {s.dtype}[{'x'.join(map(str, s.shape))}]"
        for n in graph.nodes
        for s in n.saved
        if not s.scalar
    ]
    return {
        "output": str(out.dtype).removeprefix("torch."),
        "casts": graph.counts().get("ToCopyBackward0", 0),
        "saved": saved,
        "saved_bytes": meter.alive_bytes,
        "error": None,
    }


def precision_table(input_dtype: torch.dtype = torch.float32, input_requires_grad: bool = True) -> str:
    """For every op of :data:`OPS`: the output dtype, casts and saved bytes without autocast and
    under CPU bfloat16 autocast (see :func:`precision_facts`), one row per op. An op that raises
    shows ``error [k]``; below the table, note ``[k]`` names the runs that raised it and gives
    PyTorch's message (each message once)."""
    notes: dict[str, list[str]] = {}  # PyTorch's message -> the runs that raised it, in table order

    def cells(facts: dict, op: str, mode: str) -> tuple:
        if not facts["error"]:
            return (facts["output"], facts["casts"], facts["saved_bytes"])
        runs = notes.setdefault(facts["error"], [])
        runs.append(f"{op} ({mode})")
        return (f"error [{list(notes).index(facts['error']) + 1}]", "-", "-")

    rows = [("op", "no autocast: out", "saved B", "autocast: out", "casts", "saved B")]
    for op in OPS:
        plain = cells(precision_facts(op, input_dtype, False, input_requires_grad), op, "no autocast")
        auto = cells(precision_facts(op, input_dtype, True, input_requires_grad), op, "autocast")
        rows.append((op, *plain[::2], *auto))
    grad = "requires grad" if input_requires_grad else "needs no grad"
    head = f"x: {str(input_dtype).removeprefix('torch.')}[4x8], {grad}; w: float32[8x8] parameter"
    # wrapped here: JupyterLab breaks a long output line anywhere, inside words too
    lines = [
        textwrap.fill(f"[{k}] {', '.join(runs)}: RuntimeError: {message}", 88, subsequent_indent="    ")
        for k, (message, runs) in enumerate(notes.items(), 1)
    ]
    return "\n".join([head, text_table(rows, align="<<><>"), *lines])


def precision_explorer() -> widgets.Widget:
    """A dropdown for the input's dtype and a checkbox for its requires_grad; shows
    :func:`precision_table`."""
    dtype = widgets.Dropdown(options=[("float32", torch.float32), ("bfloat16", torch.bfloat16)], description="x dtype")
    grad = widgets.Checkbox(value=True, description="x requires grad")
    return explorer(
        "precision_explorer",
        {"input_dtype": dtype, "input_requires_grad": grad},
        lambda input_dtype, input_requires_grad: precision_table(input_dtype, input_requires_grad),
    )
