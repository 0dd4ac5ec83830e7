"""Explorers of chapters 7 and 8: what a training loop keeps alive, and what checkpointing saves.

Each widget is a thin shell over a plain function that returns numbers, so what a widget shows is
what the tests check. Memory figures are ``int`` bytes of tensors saved for backward, measured with
:class:`autograder.memory.SavedTensorMeter` (see the NOTE in ``memory.py``: once per storage,
parameters excluded). ipywidgets is imported only by the widget functions (a GPU check imports
:func:`stack` and :func:`segment_rows` alone).
"""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F
from torch.utils.checkpoint import checkpoint_sequential

from ..graph import trace
from ..memory import SavedTensorMeter
from .table import bar, text_table

__all__ = [
    "POLICIES",
    "loop_memory",
    "loop_table",
    "leak_table",
    "leak_explorer",
    "stack",
    "checkpoint_peak",
    "measured_plots",
    "segment_rows",
    "segment_table",
    "segment_explorer",
]

# What a training loop logs each step, and how (chapter 7). Each step trains on a fresh batch,
# then evaluates on a fresh validation batch of the same size, and logs a (train, val) pair.
POLICIES = {
    "loss.item()": "log (loss.item(), val.item()), the val loss computed under no_grad",
    "loss tensor after backward": "log (loss, val.item()): the loss tensor itself, after backward",
    "val loss without no_grad": "log (loss.item(), val): the val loss computed WITHOUT no_grad",
    "retain_graph, loss kept": "backward(retain_graph=True); log (loss, val.item())",
    "retain_graph, loss dropped": "backward(retain_graph=True); log (loss.item(), val.item())",
}


def loop_memory(policy: str, steps: int = 6, seed: int = 0) -> list[dict]:
    """Run ``steps`` SGD steps of ``Linear(16, 32)-ReLU-Linear(32, 4)`` (MSE loss, batches of 8)
    logging as :data:`POLICIES` ``[policy]`` says, under a :class:`SavedTensorMeter`.

    Returns:
        One dict per step: ``step`` (1, 2, ...), ``alive_bytes`` (saved bytes still held after the
        step, while the log and the variable ``loss`` are kept), ``peak_bytes`` (largest so far)
        and ``nodes`` (backward Nodes reachable from the tensors in the log, AccumulateGrad
        included).

    Raises:
        KeyError: ``policy`` is not a key of :data:`POLICIES`.
    """
    if policy not in POLICIES:
        raise KeyError(f"unknown policy {policy!r}; choose one of {list(POLICIES)}")
    gen = torch.Generator().manual_seed(seed)
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    keep_loss = policy in ("loss tensor after backward", "retain_graph, loss kept")
    log, rows = [], []
    with SavedTensorMeter(exclude=model.parameters()) as meter:
        for step in range(1, steps + 1):
            x, y, vx, vy = (torch.randn(8, n, generator=gen) for n in (16, 4, 16, 4))
            loss = F.mse_loss(model(x), y)
            opt.zero_grad()
            loss.backward(retain_graph=policy.startswith("retain_graph"))
            opt.step()
            with torch.set_grad_enabled(policy == "val loss without no_grad"):
                val = F.mse_loss(model(vx), vy)
            log.append((loss if keep_loss else loss.item(), val if val.requires_grad else val.item()))
            del val
            tensors = [t for pair in log for t in pair if isinstance(t, torch.Tensor)]
            rows.append(
                dict(
                    step=step,
                    alive_bytes=meter.alive_bytes,
                    peak_bytes=meter.peak_bytes,
                    nodes=len(trace(tensors)) if tensors else 0,
                )
            )
    return rows


def loop_table(steps: int = 6) -> str:
    """Alive saved bytes after each step for every policy, as a fixed-width text table (what
    :func:`leak_explorer` shows, for all policies at once)."""
    rows = [("alive saved bytes after step", *range(1, steps + 1))]
    rows += [(policy, *(r["alive_bytes"] for r in loop_memory(policy, steps))) for policy in POLICIES]
    return text_table(rows, align="<>")


def leak_table(policy: str, steps: int = 6) -> str:
    """:func:`loop_memory` for ``policy`` as a text table with a bar of the alive bytes per step:
    what :func:`leak_explorer` shows."""
    rows = loop_memory(policy, steps)
    top = max(r["peak_bytes"] for r in rows)
    table = [("step", "alive B", "peak B", "nodes", "")]
    table += [(r["step"], r["alive_bytes"], r["peak_bytes"], r["nodes"], bar(r["alive_bytes"], top)) for r in rows]
    return POLICIES[policy] + "\n" + text_table(table, align=">>>><")


def leak_explorer():
    """A policy menu and a step slider over :func:`leak_table`: alive saved bytes as text bars."""
    import ipywidgets as widgets

    from .shell import explorer

    controls = {
        "policy": widgets.Dropdown(options=list(POLICIES), description="log"),
        "steps": widgets.IntSlider(value=6, min=1, max=20, description="steps"),
    }
    return explorer("leak_explorer", controls, leak_table)


def stack(blocks: int, kind: str = "tanh", width: int = 64, seed: int = 0) -> nn.Sequential:
    """A stack of ``blocks`` identical blocks that keep the width ``width``.

    ``kind="tanh"``: ``Linear(w, w)-Tanh``; a block saves one activation of its own (the Tanh
    output, which the next block's Linear saves too) besides its input. ``kind="mlp"``:
    ``Linear(w, 4w)-ReLU-Linear(4w, w)``; a block saves 4 activations' worth of its own (the
    ReLU output, of width 4w) besides its input. Parameters are drawn after ``manual_seed(seed)``
    without changing the caller's random state.

    Raises:
        ValueError: an unknown ``kind``.
    """
    if kind not in ("tanh", "mlp"):
        raise ValueError(f"kind must be 'tanh' or 'mlp', not {kind!r}")
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        if kind == "tanh":
            return nn.Sequential(*[nn.Sequential(nn.Linear(width, width), nn.Tanh()) for _ in range(blocks)])
        return nn.Sequential(
            *[nn.Sequential(nn.Linear(width, 4 * width), nn.ReLU(), nn.Linear(4 * width, width)) for _ in range(blocks)]
        )


def checkpoint_peak(model: nn.Sequential, x: torch.Tensor, segments: int = 0) -> int:
    """Peak saved bytes over the forward AND the backward of ``model(x).sum()``, with
    ``checkpoint_sequential(model, segments, x, use_reentrant=False)`` (``segments=0``: no
    checkpointing), parameters excluded. Gradients accumulate into the parameters' ``.grad``.

    What is counted (NOTE 4 in ``memory.py``): tensors saved by the layers that are not
    checkpointed (the last segment), and the input of each checkpointed segment (checkpoint saves
    it with ``save_for_backward``). The activations inside a checkpointed segment go through
    checkpoint's own hooks, in the forward (where they are dropped) and when they are recomputed
    during backward, so they are not counted.
    """
    with SavedTensorMeter(exclude=model.parameters()) as meter:
        out = model(x) if segments == 0 else checkpoint_sequential(model, segments, x, use_reentrant=False)
        out.sum().backward()
    return meter.peak_bytes


def segment_rows(blocks: int = 16, kind: str = "tanh", width: int = 64, batch: int = 32) -> list[dict]:
    """Measure every segment count of a :func:`stack` on a ``[batch, width]`` input.

    Returns:
        One dict per count (``segments`` 0 = no checkpointing, then 1 .. ``blocks``):
        ``peak_bytes`` (:func:`checkpoint_peak`), ``activations`` (``peak_bytes`` over the bytes of
        one ``[batch, width]`` float32 activation; a float) and ``block_runs`` (block forwards
        started in one forward and backward: ``blocks`` plus one per recomputed block).
    """
    model = stack(blocks, kind, width)
    x = torch.randn(batch, width, generator=torch.Generator().manual_seed(1))
    runs = [0]
    handles = [block.register_forward_pre_hook(lambda *_: runs.__setitem__(0, runs[0] + 1)) for block in model]
    rows = []
    try:
        for segments in range(blocks + 1):
            runs[0] = 0
            peak = checkpoint_peak(model, x, segments)
            rows.append(
                dict(segments=segments, peak_bytes=peak, activations=peak / (batch * width * 4), block_runs=runs[0])
            )
    finally:
        for handle in handles:
            handle.remove()
    return rows


def segment_table(blocks: int = 16, kind: str = "tanh", width: int = 64, batch: int = 32) -> str:
    """:func:`segment_rows` as a text table with bars; the smallest peak is marked ``<- min``,
    and the row of ``isqrt(blocks)`` segments ``(√n)``."""
    rows = segment_rows(blocks, kind, width, batch)
    top = max(r["peak_bytes"] for r in rows)
    best = min(rows[1:], key=lambda r: (r["peak_bytes"], r["segments"]))["segments"]
    table = [("segments", "peak B", "acts", "runs", "")]
    for r in rows:
        marks = (" <- min" if r["segments"] == best else "") + (" (√n)" if r["segments"] == math.isqrt(blocks) else "")
        table.append(
            (
                r["segments"] or "none",
                r["peak_bytes"],
                f"{r['activations']:.1f}",
                r["block_runs"],
                bar(r["peak_bytes"], top, 30) + marks,
            )
        )
    return f"{blocks} blocks of kind {kind!r}, input [{batch}, {width}]\n" + text_table(table, align=">>>><")


def segment_explorer():
    """A slider for the number of blocks and a menu for their kind over :func:`segment_table`."""
    import ipywidgets as widgets

    from .shell import explorer

    controls = {
        "blocks": widgets.IntSlider(value=9, min=2, max=36, description="blocks"),
        "kind": widgets.Dropdown(options=["tanh", "mlp"], description="block"),
    }
    return explorer("segment_explorer", controls, lambda blocks, kind: segment_table(blocks, kind, width=32, batch=16))


def measured_plots(rows: list[dict]) -> list:
    """The checkpointing figures (``autograder.figures``' rows: measured on a GPU, or the CPU's saved
    bytes) as plots with their text alternatives (``explore.plot.line_plot``), two per model: the peak
    against the segment count (MiB above the start: the allocator's where it was measured, and the
    saved-bytes prediction), and the median time of a forward and backward (ms)."""
    from .plot import line_plot

    plots = []
    for model in dict.fromkeys(r["model"] for r in rows):
        mine = sorted((r for r in rows if r["model"] == model), key=lambda r: r["segments"])
        segments, axis = [r["segments"] for r in mine], "segments (0 = no checkpointing)"
        where = f" ({mine[0]['device_name']})" if mine[0]["device"] == "cuda" else ""
        unit, scale = ("MiB", 2**20) if max(r["saved_peak_bytes"] for r in mine) >= 2**20 else ("KiB", 2**10)
        peaks = {"saved-bytes prediction": [r["saved_peak_bytes"] / scale for r in mine]}
        if all(r["peak_allocated_bytes"] is not None for r in mine):
            peaks = {"allocator peak": [r["peak_allocated_bytes"] / scale for r in mine], **peaks}
        plots.append(
            line_plot(peaks, segments, xlabel=axis, ylabel=f"{unit} above the start", title=f"Peak: {model}{where}",
                      purpose="Which segment count gives the lowest peak, and how far below none (0) is it?",
                      unit=unit)
        )  # fmt: skip
        plots.append(
            line_plot({"median time": [1000 * r["seconds_median"] for r in mine]}, segments, xlabel=axis,
                      ylabel="ms per forward and backward", title=f"Time: {model}{where}",
                      purpose="What does each segment count cost in time?", unit="ms")
        )  # fmt: skip
    return plots
