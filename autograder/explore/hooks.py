"""Explorer of chapter 10: which hooks fire, in which order, and what an in-place module does to them."""

from __future__ import annotations

import warnings

import ipywidgets as widgets
import torch
from torch import nn

from .shell import explorer
from .table import text_table

__all__ = ["HOOK_KINDS", "hook_events", "hook_table", "hook_explorer"]

# The kinds of hooks the explorer can register on the model Linear(3, 4) -> ReLU -> Linear(4, 1).
HOOK_KINDS = (
    "forward pre",  # module.register_forward_pre_hook, on both Linear layers
    "forward",  # module.register_forward_hook, on both Linear layers
    "tensor",  # out.register_hook on each Linear's output, from a forward hook
    "full backward pre",  # module.register_full_backward_pre_hook, on both Linear layers
    "full backward",  # module.register_full_backward_hook, on both Linear layers
    "post accumulate",  # weight.register_post_accumulate_grad_hook, on both weights
)


def hook_events(kinds=HOOK_KINDS, inplace: bool = False) -> dict:
    """Build ``Linear(3, 4) -> ReLU(inplace=inplace) -> Linear(4, 1)`` (seed 0), register the hooks
    of ``kinds`` (a subset of :data:`HOOK_KINDS`) on both Linear layers (named ``0`` and ``2``),
    run a forward on a ``[2, 3]`` input and ``backward()`` of the output's sum.

    Returns:
        ``{"events": [str, ...], "error": str | None, "warnings": [str, ...]}``: each event is
        ``"<phase> <kind> <layer>"`` with a figure where there is one (the norm of the gradient
        the hook sees, 4 decimals), in the order the hooks ran; ``error`` is the first line of the
        ``RuntimeError`` the forward or the backward raised (then the events stop there);
        ``warnings`` the first lines of the warnings PyTorch gave.
    """
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(inplace=inplace), nn.Linear(4, 1))
    x = torch.randn(2, 3)
    events: list[str] = []

    def norm(t) -> str:
        return "None" if t is None else f"{t.norm().item():.4f}"

    for name in ("0", "2"):
        layer = model.get_submodule(name)
        if "forward pre" in kinds:
            layer.register_forward_pre_hook(lambda m, args, name=name: events.append(f"forward  pre-hook  {name}"))
        if "forward" in kinds:
            layer.register_forward_hook(lambda m, args, out, name=name: events.append(f"forward  hook      {name}"))
        if "tensor" in kinds:

            def on_output(m, args, out, name=name):
                out.register_hook(lambda g: events.append(f"backward tensor    {name}  |grad out| = {norm(g)}"))

            layer.register_forward_hook(on_output)
        if "full backward pre" in kinds:
            layer.register_full_backward_pre_hook(
                lambda m, go, name=name: events.append(f"backward full pre  {name}  |grad out| = {norm(go[0])}")
            )
        if "full backward" in kinds:
            layer.register_full_backward_hook(
                lambda m, gi, go, name=name: events.append(
                    f"backward full      {name}  |grad out| = {norm(go[0])}  |grad in| = {norm(gi[0])}"
                )
            )
        if "post accumulate" in kinds:
            layer.weight.register_post_accumulate_grad_hook(
                lambda p, name=name: events.append(f"backward post acc  {name}  |weight.grad| = {norm(p.grad)}")
            )
    error = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            events.append("(forward runs)")
            out = model(x)
            events.append("(backward runs)")
            out.sum().backward()
        except RuntimeError as e:
            error = str(e).splitlines()[0]
    return {"events": events, "error": error, "warnings": [str(w.message).splitlines()[0] for w in caught]}


def hook_table(kinds=HOOK_KINDS, inplace: bool = False) -> str:
    """:func:`hook_events` as text: the events in order, numbered, then the error and warnings."""
    facts = hook_events(kinds, inplace)
    relu = "ReLU(inplace=True)" if inplace else "ReLU()"
    lines = [f"Linear(3, 4) -> {relu} -> Linear(4, 1); hooks: {', '.join(kinds) or 'none'}"]
    lines.append(text_table([("#", "event"), *((i + 1, e) for i, e in enumerate(facts["events"]))], align="><"))
    if facts["error"]:
        lines.append(f"RuntimeError: {facts['error']}")
    lines += [f"Warning: {w}" for w in facts["warnings"]]
    return "\n".join(lines)


def hook_explorer() -> widgets.Widget:
    """Checkboxes for the kinds of hooks and for an in-place ReLU; shows :func:`hook_table`."""
    boxes = {kind: widgets.Checkbox(value=kind in ("tensor", "full backward"), description=kind) for kind in HOOK_KINDS}
    boxes["inplace"] = widgets.Checkbox(value=False, description="ReLU(inplace=True)")

    def show(inplace: bool, **chosen) -> str:
        return hook_table(tuple(k for k in HOOK_KINDS if chosen[k]), inplace)

    controls = {k.replace(" ", "_"): box for k, box in boxes.items()}
    return explorer(
        "hook_explorer",
        controls,
        lambda inplace, **c: show(inplace, **{k.replace("_", " "): v for k, v in c.items()}),
    )
