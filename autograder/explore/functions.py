"""Explorer of chapter 9: one ReLU written as a custom ``torch.autograd.Function`` in four ways,
and what each keeps for backward.

The four ways differ only in what ``forward`` keeps for ``backward`` (:data:`RELU_WAYS`):

- ``"save input"``: ``ctx.save_for_backward(x)``, backward uses ``x > 0``;
- ``"save mask"``: ``ctx.save_for_backward(x > 0)``, a ``torch.bool`` tensor, 1 byte per element;
- ``"save output"``: ``ctx.save_for_backward(y)``, backward uses ``y > 0``;
- ``"ctx attribute"``: ``ctx.x = x``, no ``save_for_backward`` at all.

Saved bytes are measured with :class:`autograder.memory.SavedTensorMeter`, which sees only what
goes through ``save_for_backward`` (autograd's saved_tensors_hooks), never a ``ctx`` attribute.
"""

from __future__ import annotations

import ipywidgets as widgets
import torch

from ..memory import measure_saved
from .shell import explorer
from .table import text_table

__all__ = ["RELU_WAYS", "FOLLOWERS", "relu_function", "relu_facts", "relu_table", "relu_explorer"]


class ReluSaveInput(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_y):
        (x,) = ctx.saved_tensors
        return grad_y * (x > 0)


class ReluSaveMask(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x > 0)
        return x.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_y):
        (mask,) = ctx.saved_tensors
        return grad_y * mask


class ReluSaveOutput(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = x.clamp(min=0)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_y):
        (y,) = ctx.saved_tensors
        return grad_y * (y > 0)


class ReluCtxAttribute(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.x = x  # not through save_for_backward: no version check, no hooks, freed with the Node
        return x.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_y):
        return grad_y * (ctx.x > 0)


RELU_WAYS = {
    "save input": ReluSaveInput,
    "save mask": ReluSaveMask,
    "save output": ReluSaveOutput,
    "ctx attribute": ReluCtxAttribute,
}
# What follows the ReLU: nothing, or a product with a weight, which saves the ReLU's output
# (for the weight's gradient), so a ReLU that saves its output shares that storage.
FOLLOWERS = ("nothing", "@ w")


def relu_function(way: str) -> type[torch.autograd.Function]:
    """The Function class of ``way`` (a key of :data:`RELU_WAYS`)."""
    return RELU_WAYS[way]


def _held_by(node) -> list[str]:
    """What the Node of a custom Function still holds for backward: ``"saved_tensors"`` while
    backward has not freed them, and the name of each ``ctx`` attribute that is a tensor."""
    held = [name for name, value in vars(node).items() if isinstance(value, torch.Tensor)]
    try:
        saved = node.saved_tensors
    except RuntimeError:  # freed by backward
        return held
    return ["saved_tensors", *held] if saved else held


def relu_facts(way: str, follow: str = "nothing", n: int = 1024) -> dict:
    """Run ``h = relu(x_in)`` with the Function of ``way``, ``x_in = x * 1`` (``x``: ``[n]``
    float32, 4 bytes per element, requires grad), then ``follow`` (``"nothing"``:
    ``loss = h.sum()``; ``"@ w"``: ``loss = h @ w``, ``w`` a ``[n]`` weight that requires grad and is
    not counted), then ``loss.backward()``.

    Returns:
        A dict: ``saved_bytes`` (int, bytes the whole graph saved as the meter counts them: each storage
        once), ``relu_bytes`` (int, bytes the ReLU's Node alone saved through ``save_for_backward``),
        ``packed`` (number of tensors saved through ``save_for_backward`` or by PyTorch's own
        Nodes, ``w`` included), ``held_after_backward`` (what the ReLU's Node still holds after backward, see
        :func:`_held_by`; ``h`` is kept), ``input_changed`` (what backward does when ``x_in`` is
        changed in place between forward and backward: ``"raises"`` (the version counter check),
        ``"right"`` (backward does not read ``x_in``) or ``"silently wrong"``), ``grad_right`` (bool: is
        ``x.grad`` ReLU's gradient when nothing is changed?).
    """
    fn = relu_function(way)
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(n, generator=gen).requires_grad_()
    w = torch.randn(n, generator=gen).requires_grad_()

    def run(x_in):
        h = fn.apply(x_in)
        return h, (h @ w if follow == "@ w" else h.sum())

    (h, loss), meter = measure_saved(run, x * 1, exclude=[w])
    saved_bytes, packed = meter.alive_bytes, meter.packed_tensors
    _, relu_meter = measure_saved(fn.apply, x * 1)
    loss.backward()
    held = _held_by(h.grad_fn)
    right = (x > 0).float() * (w.detach() if follow == "@ w" else 1)
    grad_right = torch.equal(x.grad, right)

    x.grad = None
    x_in = x * 1
    h, loss = run(x_in)
    with torch.no_grad():
        x_in.mul_(-1)  # every sign flips: a backward that reads x_in now is wrong
    try:
        loss.backward()
        changed = "right" if torch.equal(x.grad, right) else "silently wrong"
    except RuntimeError:
        changed = "raises"
    return dict(
        saved_bytes=saved_bytes,
        relu_bytes=relu_meter.alive_bytes,
        packed=packed,
        held_after_backward=held,
        input_changed=changed,
        grad_right=grad_right,
    )


def relu_table(follow: str = "nothing", n: int = 1024) -> str:
    """:func:`relu_facts` of every way for ``follow`` and ``n``, as a fixed-width text table with a
    title and a legend: what :func:`relu_explorer` shows."""
    then = "h.sum()" if follow == "nothing" else "h @ w (w: a weight, alive anyway, not counted)"
    rows = [("way", "ReLU saves", "graph saves", "ReLU's Node keeps after backward", "x_in changed before backward")]
    for way in RELU_WAYS:
        f = relu_facts(way, follow, n)
        held = ", ".join(f"ctx.{a}" if a != "saved_tensors" else a for a in f["held_after_backward"]) or "nothing"
        rows.append((way, f"{f['relu_bytes']} B", f"{f['saved_bytes']} B", held, f["input_changed"]))
    title = f"h = relu(x_in), x_in: [{n}] float32 ({4 * n} B); then {then}"
    legend = (
        "ReLU saves: bytes its Node saved with save_for_backward. graph saves: bytes all Nodes saved,"
        " each storage once.\nx_in changed before backward: what backward does after x_in.mul_(-1)."
    )
    return title + "\n" + text_table(rows, align="<>><<") + "\n" + legend


def relu_explorer() -> widgets.Widget:
    """A menu of what follows the ReLU and a slider of ``n``; shows :func:`relu_table`."""
    follow = widgets.Dropdown(options=FOLLOWERS, value="nothing", description="then")
    size = widgets.IntSlider(value=1024, min=256, max=4096, step=256, description="n")
    return explorer("relu_explorer", {"follow": follow, "n": size}, relu_table)
