"""Explorers of chapters 3 and 4: what backward frees, and how gradients accumulate."""

from __future__ import annotations

import ipywidgets as widgets
import torch

from ..graph import trace
from .shell import explorer

__all__ = [
    "backward_facts",
    "backward_table",
    "backward_explorer",
    "accumulation_facts",
    "accumulation_table",
    "accumulation_explorer",
    "BACKWARD_OPS",
    "ACCUMULATION_SCALES",
]

BACKWARD_OPS = {
    "x + 1": lambda x: x + 1,  # saves nothing
    "x * 2": lambda x: x * 2,  # saves the number 2 (8 B, unseen by the meter; freed all the same)
    "x * x": lambda x: x * x,  # saves x twice: one storage
    "x ** 2": lambda x: x**2,  # saves its input
    "x.exp()": lambda x: x.exp(),  # saves its output
    "x.sigmoid()": lambda x: x.sigmoid(),  # saves its output
}


def backward_facts(op: str = "x.sigmoid()", retain_graph: bool = False) -> dict:
    """Run ``loss = OP(x).sum()`` for ``x = [1., 2., 3.]`` (float32, CPU), then ``loss.backward()``
    (with ``retain_graph``), then a second ``loss.backward()``.

    Args:
        op: a key of :data:`BACKWARD_OPS`.
        retain_graph: passed to the first backward.

    Returns:
        A dict: ``saved before`` / ``saved after`` (the saved tensors of every Node, as
        ``"Node.attr: ..."`` strings from :func:`~autograder.graph.trace`, before and after the first
        backward), ``nodes before`` / ``nodes after`` (number of Nodes), ``alive bytes`` after the
        forward and after the first backward (:class:`~autograder.memory.SavedTensorMeter`),
        ``second backward`` (``"ok"`` or the first line of the error) and ``x.grad`` (a list).
    """
    from ..memory import SavedTensorMeter

    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with SavedTensorMeter() as meter:
        loss = BACKWARD_OPS[op](x).sum()
    before, alive_forward = trace(loss, {"x": x}), meter.alive_bytes
    loss.backward(retain_graph=retain_graph)
    after, alive_backward = trace(loss, {"x": x}), meter.alive_bytes
    try:
        loss.backward()
        second = "ok"
    except RuntimeError as error:
        second = "RuntimeError: " + str(error).split(" (")[0]

    def saved(graph):
        return [f"{n.name}.{s}" for n in graph.nodes for s in n.saved]

    return {
        "saved before": saved(before),
        "saved after": saved(after),
        "nodes before": len(before),
        "nodes after": len(after),
        "alive bytes after forward": alive_forward,
        "alive bytes after backward": alive_backward,
        "second backward": second,
        "x.grad": x.grad.tolist(),
    }


def backward_table(**options) -> str:
    """:func:`backward_facts` under ``options`` as text: what :func:`backward_explorer` shows."""
    f = backward_facts(**options)
    lines = [
        f"loss = ({options.get('op', 'x.sigmoid()')}).sum(); "
        f"loss.backward(retain_graph={options.get('retain_graph', False)}); loss.backward()",
        f"Nodes before / after backward: {f['nodes before']} / {f['nodes after']}",
        "saved before backward: " + ("; ".join(f["saved before"]) or "nothing"),
        "saved after backward:  " + ("; ".join(f["saved after"]) or "nothing"),
        f"alive saved bytes: {f['alive bytes after forward']} B after forward, "
        f"{f['alive bytes after backward']} B after backward",
        f"second backward: {f['second backward']}",
        f"x.grad: {f['x.grad']}",
    ]
    return "\n".join(lines)


def backward_explorer() -> widgets.Widget:
    """A menu of operations and a ``retain_graph`` box: what backward frees, and whether a second
    backward works (:func:`backward_table`)."""
    controls = {
        "op": widgets.Dropdown(options=list(BACKWARD_OPS), value="x.sigmoid()", description="operation"),
        "retain_graph": widgets.Checkbox(value=False, description="retain_graph", indent=False),
    }
    return explorer("backward_explorer", controls, backward_table)


# Chapter 4: when does gradient accumulation reproduce the full-batch gradient?
ACCUMULATION_SCALES = ("none", "count", "size")


def accumulation_facts(
    micro_batch: int = 3, scale: str = "count", reduction: str = "mean", batchnorm: bool = False, batch: int = 12
) -> dict:
    """Compare the gradient of one batch of ``batch`` samples with the gradient accumulated over
    micro-batches of ``micro_batch`` samples (the last one smaller when it does not divide).

    The model is ``Linear(4, 8) [-> BatchNorm1d(8)] -> Tanh -> Linear(8, 1)`` in float64 on the CPU
    (fixed seed), the loss ``F.mse_loss(..., reduction=reduction)``. Each micro-batch loss is
    multiplied by 1 (``scale="none"``), divided by the number of micro-batches (``"count"``), or
    weighted by its share of the samples, ``len(micro) / batch`` (``"size"``). Micro-batches are
    separate tensors (``clone()``), so each one's saved input is its own storage.

    Returns:
        A dict: ``sizes`` (the micro-batch sizes), ``diagnosis`` (:func:`~autograder.compare.diagnose`
        kind of the accumulated gradients against the full-batch ones, all parameters flattened
        together), ``factor`` (accumulated / full when one number fits, else None), and
        ``peak bytes accumulated`` / ``peak bytes full batch`` (saved-tensor peaks, parameters
        excluded); ``error`` (str or None) when a micro-batch cannot run (BatchNorm needs more
        than one sample per micro-batch in training).
    """
    from ..compare import diagnose
    from ..memory import SavedTensorMeter

    if scale not in ACCUMULATION_SCALES:
        raise ValueError(f"scale must be one of {ACCUMULATION_SCALES}, got {scale!r}")
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(batch, 4, generator=gen, dtype=torch.float64)
    y = torch.randn(batch, 1, generator=gen, dtype=torch.float64)
    layers = [torch.nn.Linear(4, 8), torch.nn.BatchNorm1d(8)] if batchnorm else [torch.nn.Linear(4, 8)]
    model = torch.nn.Sequential(*layers, torch.nn.Tanh(), torch.nn.Linear(8, 1)).double()
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=gen, dtype=torch.float64))
    params = list(model.parameters())

    def loss_fn(xb, yb):
        return torch.nn.functional.mse_loss(model(xb), yb, reduction=reduction)

    sizes = [len(xb) for xb in x.split(micro_batch)]
    facts = {
        "sizes": sizes,
        "diagnosis": None,
        "factor": None,
        "peak bytes accumulated": None,
        "peak bytes full batch": None,
        "error": None,
    }
    try:
        with SavedTensorMeter(exclude=params) as meter:
            loss_fn(x, y).backward()
        full = torch.cat([p.grad.flatten() for p in params])
        facts["peak bytes full batch"] = meter.peak_bytes
        model.zero_grad()
        with SavedTensorMeter(exclude=params) as meter:
            for xb, yb in zip(x.split(micro_batch), y.split(micro_batch)):
                weight = {"none": 1.0, "count": 1 / len(sizes), "size": len(xb) / batch}[scale]
                (loss_fn(xb.clone(), yb.clone()) * weight).backward()
        facts["peak bytes accumulated"] = meter.peak_bytes
    except (RuntimeError, ValueError) as error:
        facts["error"] = str(error).splitlines()[0]
        return facts
    result = diagnose(torch.cat([p.grad.flatten() for p in params]), full, "accumulated gradient")
    facts["diagnosis"] = result.kind
    facts["factor"] = 1.0 if result.ok else (round(result.factor, 4) if result.factor else None)
    return facts


def accumulation_table(**options) -> str:
    """:func:`accumulation_facts` under ``options`` as text: what :func:`accumulation_explorer` shows."""
    f = accumulation_facts(**options)
    lines = [f"micro-batch sizes: {f['sizes']}"]
    if f["error"]:
        return "\n".join([*lines, f"error: {f['error']}"])
    verdict = "equal to the full-batch gradient" if f["diagnosis"] == "ok" else f"{f['diagnosis']}"
    if f["diagnosis"] != "ok" and f["factor"] is not None:
        verdict += f" (accumulated = {f['factor']:g} x full batch)"
    lines += [
        f"accumulated gradient: {verdict}",
        f"peak saved bytes: accumulated {f['peak bytes accumulated']} B, full batch {f['peak bytes full batch']} B",
    ]
    return "\n".join(lines)


def accumulation_explorer() -> widgets.Widget:
    """Sliders and menus for :func:`accumulation_facts`: micro-batch size, scaling, reduction,
    BatchNorm; shows whether accumulation reproduces the full batch, and the peak saved bytes."""
    controls = {
        "micro_batch": widgets.IntSlider(value=3, min=1, max=12, description="micro-batch"),
        "scale": widgets.Dropdown(options=list(ACCUMULATION_SCALES), value="count", description="divide by"),
        "reduction": widgets.Dropdown(options=["mean", "sum"], value="mean", description="reduction"),
        "batchnorm": widgets.Checkbox(value=False, description="BatchNorm", indent=False),
    }
    return explorer("accumulation_explorer", controls, accumulation_table)
